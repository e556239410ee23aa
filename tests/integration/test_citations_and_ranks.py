"""Citations feed the usage ranks, and the ranks decide the next phase-2 selection."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemolog.adapters.folder_reader import disk_folder_reader
from mnemolog.adapters.session_files import read_session
from mnemolog.adapters.settings import eligibility_policy
from mnemolog.domain.selection import select
from mnemolog.domain.services.cite import cite_session_file, record_citation
from mnemolog.projections.schema import table
from support.memory import extracted_session, item, save
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock, StoreFactory

SCOPE = "git:example.com/acme/api"
DAY = datetime(2026, 10, 20, tzinfo=UTC)


def citation_message(*rollout_ids: str, entries: str = "MEMORY.md:3-4|note=[used the test command]") -> str:
    """An agent reply as Codex prints it after using memory."""
    ids = "\n".join(rollout_ids)
    return (
        "I ran the fast test target as memory suggested; all green.\n\n"
        "<oai-mem-citation>\n<citation_entries>\n"
        f"{entries}\n"
        "</citation_entries>\n<rollout_ids>\n"
        f"{ids}\n"
        "</rollout_ids>\n</oai-mem-citation>\n"
    )


def usage(store, name: str) -> dict[str, int]:
    key = "session_id" if name == "session_usage" else "item_id"
    rows = store.reads().query(f"SELECT {key} AS k, use_count FROM {table(name)}")
    return {r["k"]: int(r["use_count"]) for r in rows}


def ranked(store, now: datetime) -> list:
    return [s.session_id for s in select(store.reads().candidates(), now, timedelta(days=30), 256)]


def test_a_cited_codex_session_ranks_first_in_the_next_selection(store_factory: StoreFactory) -> None:
    clock = FixedClock(DAY + timedelta(days=2))
    store = store_factory(clock=clock)
    sessions = [
        extracted_session(store, thread_id(n), SCOPE, f"task {n}", updated_at=DAY + timedelta(hours=n))
        for n in (1, 2, 3)
    ]
    assert ranked(store, clock()) == [sessions[2], sessions[1], sessions[0]]  # newest first while unused

    report = record_citation(store, citation_message(thread_id(1)), "cli")

    assert report.citations == 1
    assert report.rollout_ids == [thread_id(1)]
    assert report.session_ids == [str(sessions[0])]
    assert usage(store, "session_usage") == {str(sessions[0]): 1}
    assert ranked(store, clock())[0] == sessions[0]

    clock.advance(hours=1)
    record_citation(store, citation_message(thread_id(2), thread_id(1)), "cli")
    assert usage(store, "session_usage") == {str(sessions[0]): 2, str(sessions[1]): 1}
    assert ranked(store, clock()) == [sessions[0], sessions[1], sessions[2]]


def test_legacy_thread_ids_and_item_markers_are_cited_once_per_call(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock(DAY))
    (kept,) = save(store, item(SCOPE, "Run make test-fast before pushing."))
    session = extracted_session(store, thread_id(7), SCOPE, "task 7", updated_at=DAY)
    text = (
        f"Used [item:{kept}] and [item:{kept}] again, plus [item:00000000-0000-4000-8000-000000000000].\n"
        f"<oai-mem-citation><citation_entries>\n</citation_entries>"
        f"<thread_ids>\n{thread_id(7)}\n</thread_ids></oai-mem-citation>"
    )
    report = record_citation(store, text, "cli")
    assert report.citations == 1
    assert report.item_ids == [kept]
    assert report.unknown_items == ["00000000-0000-4000-8000-000000000000"]
    assert usage(store, "item_usage") == {kept: 1}
    assert usage(store, "session_usage") == {str(session): 1}
    assert record_citation(store, "no citation here", "cli").citations == 0


def test_entries_naming_lines_of_the_rendered_folder_cite_the_items_there(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock(DAY))
    first, second = save(store, item(SCOPE, "Use pnpm, not npm."), item(SCOPE, "Lint with ruff."))
    folder = tmp_path / "memories"
    (folder).mkdir()
    (folder / "MEMORY.md").write_text(f"# Task Group: api\n- Use pnpm, not npm. [item:{first}]\n- Lint with ruff. [item:{second}]\n")
    report = record_citation(
        store, citation_message(entries="MEMORY.md:2-2|note=[package manager]"), "cli",
        read_file=disk_folder_reader(folder),
    )
    assert report.item_ids == [first]
    # A path outside the folder is never read.
    outside = record_citation(
        store, citation_message(entries="../../etc/passwd:1-3|note=[x]"), "cli", read_file=disk_folder_reader(folder)
    )
    assert outside.item_ids == []


def test_citing_a_session_file_and_ingesting_it_count_once(store_factory: StoreFactory, tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 11, 1, tzinfo=UTC))
    store = store_factory(clock=clock)
    cited = extracted_session(store, thread_id(1), SCOPE, "task 1", updated_at=DAY)
    rollout = write_rollout(tmp_path / "sessions", thread_id(9), "Fix the build", when="2026-10-25T10:00:00.000Z")
    with rollout.open("a") as handle:
        handle.write(json.dumps({"timestamp": "2026-10-25T10:05:00.000Z", "type": "event_msg", "payload": {
            "type": "agent_message", "message": "Done, using memory.",
            "memory_citation": {"entries": [{"path": "MEMORY.md", "lineStart": 1, "lineEnd": 2, "note": "build"}],
                                "rolloutIds": [thread_id(1)]}}}) + "\n")

    first = cite_session_file(store, read_session(rollout))
    assert first.citations == 1 and first.session_ids == [str(cited)]
    assert cite_session_file(store, read_session(rollout)).citations == 0  # the same file again
    ingest_files(store, [rollout], eligibility_policy(store.settings, None, True))
    assert usage(store, "session_usage") == {str(cited): 1}
