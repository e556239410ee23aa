"""Views built incrementally equal views rebuilt from the whole log."""

from __future__ import annotations

from mnemolog.projections.view_reads import ViewReads
from support.scenarios import every_event


def test_incremental_views_equal_a_rebuild(store_factory) -> None:
    store = store_factory()
    every_event(store.app)
    store.catch_up()
    # more events after a first catch-up, so the incremental build has two steps
    ids = every_event_again(store)
    store.catch_up()
    incremental = ViewReads(store.view).dump()
    assert incremental["sessions"] and incremental["items"] and ids

    replayed = store.rebuild()

    assert replayed == store.app.max_notification_id()
    assert ViewReads(store.view).dump() == incremental
    assert store.views_position() == store.log_position()


def every_event_again(store):
    from mnemolog.domain.memory_item import MemoryItem

    item = MemoryItem(
        kind="skill", scope="global", task_group="", title="t", text="Use ripgrep for code search",
        keywords=("rg",), evidence=(), valid_from=None, consolidation_id=None, reason="note",
    )
    store.app.save_all(item)
    return [item.id]


def test_catch_up_is_exactly_once(store_factory) -> None:
    """Replaying an already applied position fails and changes nothing."""
    import pytest
    from eventsourcing.persistence import IntegrityError, Tracking

    store = store_factory()
    every_event(store.app)
    store.catch_up()
    before = ViewReads(store.view).dump()
    first = store.app.recorder.select_notifications(start=1, limit=1)[0]
    with pytest.raises(IntegrityError):
        store.view.apply([(store.app.mapper.to_domain_event(first), Tracking(store.app.name, first.id))])
    assert ViewReads(store.view).dump() == before


def test_views_built_under_an_older_schema_are_rebuilt_when_the_store_opens(store_factory) -> None:
    """An upgrade that changes the view tables (here: notes gained ``withdrawn``) replays the log on first open."""
    from datetime import UTC, datetime

    from mnemolog.domain.note import Note
    from mnemolog.projections.schema import SCHEMA_TABLE, table

    store = store_factory()
    store.app.save_all(Note(text="Use pnpm, not npm.", intent="remember", scope="global", source="cli", written_at=datetime.now(UTC)))
    store.catch_up()
    with store.view.datastore.transaction(commit=True) as cursor:  # the tables as an older version left them
        cursor.execute(f"DROP TABLE {table('notes')}")
        cursor.execute(f"CREATE TABLE {table('notes')} (id TEXT PRIMARY KEY, text TEXT, intent TEXT, scope TEXT, source TEXT, written_at TEXT, applied_by TEXT)")
        cursor.execute(f"UPDATE {SCHEMA_TABLE} SET version = 'older'")

    reopened = store_factory()

    assert [n.text for n in reopened.reads().notes()] == ["Use pnpm, not npm."]
    assert reopened.view.built_version() == store_factory().view.built_version() != "older"
