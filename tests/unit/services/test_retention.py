"""Prune, reset and orphan retirement on a store in memory: memory withdrawn as events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.services.evidence import retire_orphans
from mnemolog.domain.services.retention import prune, reset
from mnemolog.domain.session import Session, SessionMode
from support.memory import extracted_session, item, save
from support.sessions import thread_id
from support.stores import FixedClock

API = "git:example.com/acme/api"


def last_event(store: Store, aggregate_id: str | UUID) -> object:
    return list(store.app.events.get(UUID(str(aggregate_id))))[-1]


def test_prune_withdraws_stale_unselected_extractions_and_retires_what_lost_all_evidence(memory_store: Store) -> None:
    store = memory_store
    assert isinstance(store.clock, FixedClock)
    # The imports below happen 31 days before the clock: only a session's own time can keep it in the window.
    now = store.clock.past_the_saves(days=31)
    old = extracted_session(store, thread_id(1), API, "An old task.", updated_at=now - timedelta(days=61))
    new = extracted_session(store, thread_id(2), API, "A recent task.", updated_at=now - timedelta(days=7))
    only_old, mixed, bare = save(
        store,
        item(API, "Old knowledge.", evidence=(old,)),
        item(API, "Knowledge seen twice.", evidence=(old, new)),
        item("global", "The user prefers short answers.", kind="preference"),
    )

    report = prune(store)  # Codex's 30 days

    assert report.sessions == (old,) and report.retired == (UUID(only_old),)
    assert report.as_dict() == {"pruned": [str(old)], "retired": [only_old]}
    reads = store.reads()
    assert reads.live_session_ids() == frozenset({new})
    assert {str(i.item_id) for i in reads.active_items()} == {mixed, bare}
    assert isinstance(last_event(store, old), Session.Pruned)
    retired = last_event(store, only_old)
    assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.CODE
    assert prune(store).as_dict() == {"pruned": [], "retired": []}  # nothing more is stale

    store.clock.advance(days=60)
    later = prune(store, retention=timedelta(days=90))  # a wider window keeps it
    assert later.sessions == ()
    assert prune(store).sessions == (new,)


def test_reset_withdraws_every_extraction_and_every_item(memory_store: Store) -> None:
    store = memory_store
    sessions = [extracted_session(store, thread_id(n), API, f"task {n}", updated_at=datetime(2026, 10, 20 + n, tzinfo=UTC)) for n in (1, 2)]
    items = save(store, item(API, "One.", evidence=(sessions[0],)), item("global", "Two.", kind="preference"))

    report = reset(store, "starting over")

    assert set(report.sessions) == set(sessions) and {str(i) for i in report.retired} == set(items)
    reads = store.reads()
    assert reads.active_items() == [] and reads.live_session_ids() == frozenset()
    retired = last_event(store, items[1])
    assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.USER and retired.reason == "reset: starting over"
    assert store.app.max_notification_id() > 0  # the log and its history stay
    assert reset(store).as_dict() == {"pruned": [], "retired": []}


def test_items_whose_evidence_is_all_gone_for_good_are_retired_by_code(memory_store: Store) -> None:
    store = memory_store
    assert retire_orphans(store) == ()
    polluted = extracted_session(store, thread_id(1), API, "Looked it up on the web.", updated_at=datetime(2026, 10, 21, tzinfo=UTC))
    live = extracted_session(store, thread_id(2), API, "Fixed the build.", updated_at=datetime(2026, 10, 22, tzinfo=UTC))
    orphan, kept = save(store, item(API, "From the web.", evidence=(polluted,)), item(API, "Seen twice.", evidence=(polluted, live)))
    session: Session = store.app.repository.get(polluted)
    session.change_mode(SessionMode.POLLUTED, "used external context: web search")
    store.app.save_all(session)

    assert retire_orphans(store) == (UUID(orphan),)
    assert [str(i.item_id) for i in store.reads().active_items()] == [kept]
    retired = last_event(store, orphan)
    assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.CODE
    assert retire_orphans(store) == ()
