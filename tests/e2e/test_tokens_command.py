"""`mnemolog tokens` on the shared real rollouts: fewer tokens, nothing important lost."""

from __future__ import annotations

from support.cli import run_cli
from support.shared_fixtures import shared_fixture


def test_tokens_against_codex_plain_serialisation() -> None:
    folder = shared_fixture("codex-rollouts")
    result = run_cli("tokens", "--json", str(folder))
    assert result.code == 0, result.err
    sessions = {s["native_id"]: s for s in result.json()["sessions"]}
    assert len(sessions) == 4
    for s in sessions.values():
        assert s["lossless"], s
        assert s["rendered_tokens"] <= s["plain_tokens"]
    big = sessions["019e1625-789d-76c0-80ab-3724b5ddb799"]
    assert big["ratio"] < 0.5 and big["error_lines"] > 50 and big["user_messages"] == 2  # <environment_context> is context, not a user message

    table = run_cli("tokens", str(folder))
    assert table.code == 0
    assert "codex plain" in table.out and "019e1625-789d-76c0-80ab-3724b5ddb799" in table.out
