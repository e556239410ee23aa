"""Secret redaction: planted secrets disappear, ordinary text stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemolog.adapters.redaction import REDACTED, redact, redact_transcript
from mnemolog.adapters.session_files import read_session
from support.secrets_corpus import (
    BENIGN,
    SECRETS,
    planted,
    write_claude_transcript,
    write_codex_rollout,
)
from support.shared_fixtures import shared_fixture


def leaked_pieces(value: str, text: str, width: int = 16) -> list[str]:
    """Any part of ``value`` (``width`` characters or the whole value) still in ``text``."""
    if len(value) <= width:
        return [value] if value in text else []
    return [
        value[i : i + width] for i in range(len(value) - width + 1) if value[i : i + width] in text
    ]


def test_corpus_is_large_and_varied() -> None:
    assert len(SECRETS) >= 35
    assert len({kind for kind, _ in SECRETS}) == len(SECRETS)


@pytest.mark.parametrize(("kind", "value"), SECRETS, ids=[kind for kind, _ in SECRETS])
def test_each_planted_secret_is_removed(kind: str, value: str) -> None:
    text = f"Here is the setting you asked for:\n{planted(kind, value)}\nThanks!"
    clean, count = redact(text)
    assert count >= 1
    assert REDACTED in clean
    assert leaked_pieces(value, clean) == []
    assert clean.startswith("Here is the setting you asked for:\n")
    assert clean.endswith("\nThanks!")


@pytest.mark.parametrize("text", BENIGN)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == (text, 0)


def test_connection_string_keeps_user_and_host() -> None:
    clean, count = redact("postgres://app_user:Pg-Pass-7f3K9q2W@db.internal:5432/app")
    assert (clean, count) == (f"postgres://app_user:{REDACTED}@db.internal:5432/app", 1)


def test_bearer_keeps_the_scheme_word() -> None:
    clean, _ = redact("Authorization: Bearer abcdefghijklmnop1234")
    assert clean == f"Authorization: Bearer {REDACTED}"


def test_whole_private_key_block_goes_and_the_text_after_stays() -> None:
    block = dict(SECRETS)["rsa private key"]
    clean, count = redact(f"before\n{block}\nafter")
    assert (clean, count) == (f"before\n{REDACTED}\nafter", 1)


def test_redacting_twice_changes_nothing() -> None:
    once, _ = redact("password=hunter2-Corr3ct-Horse and api_key: f3b9c2e71d6a4058b7c1e2d3")
    assert redact(once) == (once, 0)


def test_empty_text() -> None:
    assert redact("") == ("", 0)


@pytest.mark.parametrize("writer", [write_codex_rollout, write_claude_transcript])
def test_no_planted_secret_survives_in_a_session(writer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    transcript = read_session(writer(tmp_path))
    raw = "\n".join(item.text for item in transcript.items)
    assert sum(1 for _, value in SECRETS if value.splitlines()[-1] in raw) == len(SECRETS)
    clean, count = redact_transcript(transcript)
    assert count >= len(SECRETS)
    texts = [item.text for item in clean.items]
    texts.append(clean.meta.first_user_message or "")
    everything = "\n".join(texts)
    leaks = {kind: leaked_pieces(value, everything) for kind, value in SECRETS}
    assert {kind: pieces for kind, pieces in leaks.items() if pieces} == {}
    assert clean.meta.cwd == transcript.meta.cwd
    assert [item.kind for item in clean.items] == [item.kind for item in transcript.items]


def test_a_large_real_rollout_keeps_its_ordinary_content() -> None:
    path = shared_fixture(
        "codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    transcript = read_session(path)
    clean, _ = redact_transcript(transcript)
    # Ordinary content survives: commands, paths and the commit in the text.
    assert [item.tool for item in clean.items] == [item.tool for item in transcript.items]
    assert any("codemie-code" in item.text for item in clean.items)


def test_an_assignment_used_as_a_folder_name_loses_its_value_not_the_path() -> None:
    key = "9f8e7d6c5b4a39281706f5e4d3c2b1a0c4d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5"
    text, found = redact(f"cd /home/dev/WEBHOOK_SIGNING_KEY={key}/app")
    assert key not in text and found == 1
    assert text == f"cd /home/dev/WEBHOOK_SIGNING_KEY={REDACTED}/app"


def test_json_inside_a_json_string_is_redacted_too() -> None:
    import json

    secret = "Q~8xZ.k2Lm_9Np4Rt7Vw1Yb3Dc6Fh0Jj5"
    arguments = json.dumps({"cmd": json.dumps({"client_id": "web-app", "client_secret": secret})})
    text, found = redact(arguments)
    assert secret not in text and found >= 1
    assert '\\"client_id\\": \\"web-app\\"' in text  # the rest of the escaped JSON stays as it was
