"""`forget --erase`: after it, no byte of the store holds the value, on both backends, and the log still replays."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.sealing import ERASED
from mnemolog.domain.services.erase import erase_value
from mnemolog.domain.services.forget import forget_value
from support.forgetting import API, SECRET, everything_an_agent_reads, start
from support.postgres import find_postgres_bindir
from support.stores import StoreFactory

# Every spelling the value could leave behind: itself, and its rarest word alone (a search index keeps words).
NEEDLES = (SECRET.encode(), b"falcon", SECRET.encode("utf-16-le"))


def store_bytes(store: Store, database_url: str | None) -> bytes:
    """Every byte the store keeps: each file of the SQLite home (free pages, journals, WAL included), or a pg_dump."""
    if database_url is None:
        return b"".join(p.read_bytes() for p in sorted(Path(store.location).rglob("*")) if p.is_file())
    bindir = find_postgres_bindir()
    pg_dump = str(bindir / "pg_dump") if bindir else shutil.which("pg_dump")
    assert pg_dump, "pg_dump is needed to scan a PostgreSQL store"
    done = subprocess.run([pg_dump, "--dbname", database_url], capture_output=True, check=True, timeout=120)
    return done.stdout


def holds_value(data: bytes) -> list[bytes]:
    return [needle for needle in NEEDLES if needle in data]


def test_after_a_plain_forget_the_value_is_still_in_the_stored_bytes(store_factory: StoreFactory, tmp_path: Path, database_url: str | None) -> None:
    store = store_factory()
    start(store, tmp_path)
    forget_value(store, SECRET, "global")
    assert holds_value(store_bytes(store, database_url)), "the history keeps the value: what erase exists for"


def test_erase_leaves_the_value_in_no_byte_of_the_store(store_factory: StoreFactory, tmp_path: Path, database_url: str | None) -> None:
    store = store_factory()
    scenario = start(store, tmp_path)
    value_items = scenario.value_items()
    clean_before = {i.item_id: i.text for i in store.reads().active_items() if SECRET not in i.text}
    assert clean_before
    assert holds_value(store_bytes(store, database_url))

    report = erase_value(store, SECRET, store.keys, store)

    assert report.erased.get("session", 0) >= 1 and report.erased.get("item", 0) >= 1
    assert report.keys_destroyed >= report.erased["session"]
    assert report.unsealed_events == 0
    assert set(value_items) <= set(report.retired)
    assert not holds_value(store_bytes(store, database_url))
    seen = everything_an_agent_reads(store)
    assert not [name for name, text in seen.items() if SECRET in text]
    # What must survive does: the clean items keep their text, and memory is otherwise the same.
    assert {i.item_id: i.text for i in store.reads().active_items()} == clean_before


def test_after_erase_rebuild_gives_the_same_views_and_explain_shows_erased(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    scenario = start(store, tmp_path)
    item_id = scenario.value_items()[0]
    erase_value(store, SECRET, store.keys, store)
    after = store.reads().dump()
    store.rebuild()
    assert store.reads().dump() == after
    again = store_factory()  # a fresh process replays the log with the keys that are left
    again.rebuild()
    assert again.reads().dump() == after
    found = again.history().explain(item_id, again.matcher())
    assert found is not None
    story = found.as_dict()
    added = story["history"][0]
    assert added["action"] == "added" and added["after"]["text"] == ERASED
    assert SECRET not in repr(story)


def test_a_long_lived_process_reads_the_erase_of_another_once_it_catches_up(store_factory: StoreFactory, tmp_path: Path) -> None:
    """The MCP server keeps one store open: the keys it had opened before an erase elsewhere must not open the past again."""
    store = store_factory()
    item_id = start(store, tmp_path).value_items()[0]
    server = store_factory()
    server.catch_up()
    assert SECRET in repr(server.history().explain(item_id, server.matcher()))  # its key now opened, in this process

    erase_value(store, SECRET, store.keys, store)  # another process (the user's terminal)
    server.catch_up()  # what the server does at each tool call
    found = server.history().explain(item_id, server.matcher())
    assert found is not None
    story = found.as_dict()
    assert story["history"][0]["after"]["text"] == ERASED
    assert SECRET not in repr(story)


def test_a_session_that_carried_the_value_keeps_its_other_text(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    scenario = start(store, tmp_path)
    erase_value(store, SECRET, store.keys, store)
    session = store.app.repository.get(scenario.source)
    text = " ".join(i.text for i in session.transcript)
    assert "make test" in text and SECRET not in text
    assert session.extraction is not None and "Deployed" in session.extraction.rollout_summary
    for event in store.app.events.get(scenario.source):
        if type(event).__name__ == "Recorded":
            assert all(i.text in (ERASED, "") for i in event.transcript)


def test_an_item_revised_away_from_the_value_keeps_its_current_text(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    item = MemoryItem(
        kind="knowledge", scope=API, task_group="api", title="Deploy", text=f"Deploy with {SECRET}.",
        keywords=("deploy",), evidence=(), valid_from=None, consolidation_id=None, reason="seed",
    )
    item.revise(title="Deploy", text="Deploy with the release script.", keywords=("deploy",), evidence=(),
                valid_from=None, consolidation_id=None, reason="fixed")
    store.app.save_all(item)
    report = erase_value(store, SECRET, store.keys, store)
    assert report.erased == {"item": 1}
    current: MemoryItem = store.app.repository.get(item.id)
    assert current.is_active and current.text == "Deploy with the release script."
    row = next(i for i in store.reads().active_items() if i.item_id == UUID(str(item.id)))
    assert row.text == "Deploy with the release script." and row.task_group == "api"


def test_lifting_an_erased_value_brings_nothing_back(store_factory: StoreFactory, tmp_path: Path, database_url: str | None) -> None:
    from mnemolog.domain.services.forget import lift

    store = store_factory()
    start(store, tmp_path)
    report = erase_value(store, SECRET, store.keys, store)
    lifted = lift(store, report.tombstone_id, "changed my mind")
    assert lifted.lifted and lifted.restored_sessions == ()
    assert not holds_value(store_bytes(store, database_url))
