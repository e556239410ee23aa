"""Where in a session an item came from: the entries sharing its rarest words, scrubbed, none for a deleted session."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_memory_store
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.session import Session, SessionFacts
from mnemolog.domain.transcript import ItemKind, TranscriptItem

API = "git:github.com/acme/api"
WHEN = datetime(2026, 10, 20, tzinfo=UTC)


def _session(store, entries: list[tuple[ItemKind, str, str | None]]) -> Session:
    facts = SessionFacts(
        source="codex", native_id="019a-lines", path="/home/dev/.codex/rollout.jsonl", cwd="/home/dev/api", scope=API,
        started_at=WHEN, updated_at=WHEN, content_hash="h-lines", first_user_message=entries[0][1],
    )
    session = Session(facts=facts, transcript=tuple(TranscriptItem(kind=k, text=t, tool=tool) for k, t, tool in entries))
    store.app.save_all(session)
    return session


ENTRIES = [
    (ItemKind.USER, "Fix the flaky test in /home/dev/api please", None),
    (ItemKind.TOOL_CALL, '{"command": "ls /home/dev/api"}', "shell"),
    (ItemKind.TOOL_CALL, '{"command": "pytest tests/test_retry.py -p no:randomly"}', "shell"),
    (ItemKind.TOOL_OUTPUT, "1 passed in /home/dev/api", "shell"),
    (ItemKind.ASSISTANT, "The retry test passes when pytest runs with -p no:randomly; the key is sk-blue-falcon here.", None),
]


def test_the_entries_with_the_items_rarest_words_come_in_session_order(tmp_path: Path) -> None:
    store = open_memory_store(Settings(home=tmp_path / "home"))
    session = _session(store, ENTRIES)

    lines = store.history().source_lines(session.id, "Run the retry test with pytest -p no:randomly in /home/dev/api", store.matcher(), limit=2)

    assert [line.entry for line in lines] == [3, 5]  # the path is in every entry: it tells none apart
    assert lines[0].kind == "tool_call" and lines[0].tool == "shell" and "no:randomly" in lines[0].text
    assert store.history().source_lines(session.id, "the and of", store.matcher()) == []


def test_excerpts_are_scrubbed_and_a_deleted_session_shows_none(tmp_path: Path) -> None:
    store = open_memory_store(Settings(home=tmp_path / "home"))
    session = _session(store, ENTRIES)
    forget_value(store, "sk-blue-falcon", "global")

    lines = store.history().source_lines(session.id, "retry test passes with no:randomly", store.matcher())
    assert lines and all("blue-falcon" not in line.text for line in lines)

    gone: Session = store.app.repository.get(session.id)
    gone.delete("test")
    store.app.save_all(gone)
    assert store.history().source_lines(session.id, "retry test passes with no:randomly", store.matcher()) == []
