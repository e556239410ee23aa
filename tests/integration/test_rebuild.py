"""Views built incrementally equal views rebuilt from the whole log."""

from __future__ import annotations

from mnemolog.projections.reads import ViewReads
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
    assert store.lag() == 0


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
