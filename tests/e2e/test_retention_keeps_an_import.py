"""A first import of a whole history is not retired by age by the next session (the retention window counts from the import).

The quick start imports every session a user has (`run --all`); most of them
are older than the 30-day window. The next captured session, or a plain
`consolidate`, used to retire all of them, an accepted item among them. Now the
window counts from the later of a session's time, its import and its last use.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from support.cli import run_cli
from support.sessions import thread_id, write_rollout
from support.shared_fixtures import shared_fixture


def active_items(env: dict[str, str]) -> dict[str, dict[str, str]]:
    listed = run_cli("list", "items", "--all", "--status", "active", "--json", "--limit", "1000", env=env)
    assert listed.code == 0, listed.err
    return {row["id"]: row for row in listed.json()["items"]}


def test_run_all_then_a_captured_session_and_a_plain_consolidate_retire_nothing_by_age(tmp_path: Path) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    history = [shared_fixture("codex-rollouts"), shared_fixture("claude-code")]
    imported = run_cli("run", "--all", *map(str, history), "--json", env=env)
    assert imported.code in (0, 3), imported.err  # 3: a fixture with lines it cannot read is reported, the rest goes on
    before = active_items(env)
    assert len(before) >= 3, "the shared fixtures give memory to keep"
    accepted, row = next(iter(before.items()))
    assert run_cli("review", accepted, "--accept", "--project", row["scope"], env=env).code == 0

    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    new = write_rollout(tmp_path / "today", thread_id(77), "Add a health check endpoint.", when=now)
    captured = run_cli("capture", str(new), "--json", env=env)
    assert captured.code == 0, captured.err
    consolidated = run_cli("consolidate", "--json", env=env)
    assert consolidated.code == 0, consolidated.err
    assert consolidated.json()["items"]["retired"] == 0, consolidated.json()["retired_items"]

    after = active_items(env)
    gone = set(before) - set(after)
    assert not gone, f"{len(gone)} of {len(before)} imported items were retired by the next session"
    assert after[accepted]["trust"] == "accepted"
