"""The cite service on a store in memory: citations in an agent's output feed the usage ranks."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.services.cite import cite_session_file, record_citation, save_citation
from mnemolog.domain.transcript import (
    CitationRef,
    ItemKind,
    SessionMeta,
    Transcript,
    TranscriptItem,
)
from mnemolog.projections.schema import table
from support.memory import extracted_session, item, save
from support.sessions import thread_id

API = "git:example.com/acme/api"
DAY = datetime(2026, 10, 20, tzinfo=UTC)
UNKNOWN = "00000000-0000-4000-8000-000000000000"


def uses(store: Store, name: str) -> dict[str, int]:
    key = "session_id" if name == "session_usage" else "item_id"
    rows = store.reads().query(f"SELECT {key} AS k, use_count FROM {table(name)}")
    return {r["k"]: int(r["use_count"]) for r in rows}


def block(*rollout_ids: str, entries: str = "") -> str:
    return (
        f"<oai-mem-citation>\n<citation_entries>\n{entries}\n</citation_entries>\n"
        f"<rollout_ids>\n{chr(10).join(rollout_ids)}\n</rollout_ids>\n</oai-mem-citation>"
    )


def test_item_markers_and_rollout_ids_are_cited_and_unknown_items_reported(memory_store: Store) -> None:
    store = memory_store
    (known,) = save(store, item(API, "Run make test-fast before pushing."))
    cited_session = extracted_session(store, thread_id(1), API, "task 1", updated_at=DAY)

    report = record_citation(store, f"Used [item:{known}], [item:{known}] and [item:{UNKNOWN}].\n{block(thread_id(1))}", "cli")

    assert report.as_dict() == {
        "citations": 1,
        "item_ids": [known],
        "session_ids": [str(cited_session)],
        "rollout_ids": [thread_id(1)],
        "entries": [],
        "unknown_items": [UNKNOWN],
    }
    assert uses(store, "item_usage") == {known: 1} and uses(store, "session_usage") == {str(cited_session): 1}
    before = store.app.max_notification_id()
    assert record_citation(store, "no citation here").citations == 0
    assert record_citation(store, f"only [item:{UNKNOWN}]").as_dict()["unknown_items"] == [UNKNOWN]
    assert store.app.max_notification_id() == before  # nothing cited, nothing written


def test_entries_cite_the_items_on_the_lines_they_name_and_a_key_records_once(memory_store: Store) -> None:
    store = memory_store
    first, second = save(store, item(API, "Use pnpm, not npm."), item(API, "Lint with ruff."))
    files = {"MEMORY.md": f"# Task Group: api\n- Use pnpm, not npm. [item:{first}]\n- Lint with ruff. [item:{second}]\n"}

    text = block(entries="MEMORY.md:2-2|note=[package manager]\nmissing.md:1-3|note=[x]")
    report = record_citation(store, text, "mcp", read_file=files.get, key="reply-1")
    again = record_citation(store, text, "mcp", read_file=files.get, key="reply-1")

    assert report.citations == 1 and report.item_ids == [first] and again.citations == 0
    assert report.entries == ["MEMORY.md:2|note=[package manager]", "missing.md:1-3|note=[x]"]  # normalised
    assert uses(store, "item_usage") == {first: 1}
    assert record_citation(store, text, "mcp").item_ids == []  # without the folder the lines cannot be read


def test_a_session_file_is_cited_once_however_often_it_is_read(memory_store: Store) -> None:
    store = memory_store
    (known,) = save(store, item(API, "Run make test-fast before pushing."))
    cited_session = extracted_session(store, thread_id(1), API, "task 1", updated_at=DAY)
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id=thread_id(9), path="/tmp/rollout.jsonl", updated_at=DAY),
        items=(
            TranscriptItem(kind=ItemKind.USER, text=f"Is [item:{known}] right?"),  # the user's words cite nothing
            TranscriptItem(kind=ItemKind.ASSISTANT, text=f"Yes, per [item:{known}] and [item:{UNKNOWN}]."),
        ),
        citations=(CitationRef(rollout_ids=(thread_id(1),), entries=("MEMORY.md:1-1|note=[build]",)),),
    )

    first = cite_session_file(store, transcript)
    again = cite_session_file(store, transcript)

    assert first.citations == 2 and again.citations == 0
    assert first.item_ids == [known] and first.unknown_items == [UNKNOWN]
    assert first.session_ids == [str(cited_session)] and first.rollout_ids == [thread_id(1)]
    assert first.entries == ["MEMORY.md:1-1|note=[build]"]
    assert uses(store, "item_usage") == {known: 1} and uses(store, "session_usage") == {str(cited_session): 1}


def test_a_citation_names_where_it_came_from(memory_store: Store) -> None:
    with pytest.raises(ValueError, match="unknown citation source"):
        save_citation(memory_store, item_ids=[UUID(int=1)], session_ids=[], source="somewhere")
    assert save_citation(memory_store, item_ids=[], session_ids=[], source="cli") is None
