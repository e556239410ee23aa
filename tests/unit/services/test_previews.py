"""Dry runs on a store in memory: a preview names what the command would do, and writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from mnemolog.adapters.bootstrap import Store
from mnemolog.domain.services.forget import forget_session, forget_value
from mnemolog.domain.services.previews import (
    preview_forget_item,
    preview_forget_session,
    preview_forget_value,
    preview_prune,
)
from mnemolog.domain.services.retention import prune
from support.memory import extracted_session, item, save
from support.sessions import thread_id

API = "git:example.com/acme/api"
SECRET = "blue-falcon-42"
DAY = datetime(2026, 10, 1, tzinfo=UTC)


def position(store: Store) -> int:
    written: int = store.app.recorder.max_notification_id() or 0
    return written


def test_a_forget_preview_names_what_forget_then_does_and_writes_nothing(memory_store: Store) -> None:
    store = memory_store
    carrier = extracted_session(store, thread_id(1), API, f"Deployed with {SECRET}.", updated_at=DAY)
    other = extracted_session(store, thread_id(2), API, "Added the CSV export.", updated_at=DAY)
    value_item, clean = save(store, item(API, f"Deploy with {SECRET}.", evidence=(carrier,)), item(API, "CSV in chunks.", evidence=(other,)))
    before = position(store)

    preview = preview_forget_value(store, SECRET, "global")

    assert position(store) == before
    assert [str(i.item_id) for i in preview.retired] == [value_item] and preview.scrubbed_sessions == (carrier,)
    assert SECRET not in str(preview.as_dict())
    done = forget_value(store, SECRET, "global")
    assert [str(i) for i in done.retired] == [value_item] and done.scrubbed_sessions == (carrier,)
    assert done.tombstone_id == preview.tombstone_id
    assert preview_forget_value(store, SECRET, "global").already

    after_forget = position(store)
    by_item = preview_forget_item(store, UUID(clean))
    assert [str(i.item_id) for i in by_item.retired] == [clean] and by_item.scope == API
    by_session = preview_forget_session(store, thread_id(2))
    assert by_session.deleted_session == other and [str(i.item_id) for i in by_session.retired] == [clean]
    assert position(store) == after_forget  # neither preview wrote anything
    assert [str(i) for i in forget_session(store, thread_id(2)).retired] == [clean]


def test_a_prune_preview_equals_the_prune(memory_store: Store) -> None:
    store = memory_store
    old = extracted_session(store, thread_id(1), API, "An old task.", updated_at=store.clock() - timedelta(days=90))
    extracted_session(store, thread_id(2), API, "A new task.", updated_at=store.clock() - timedelta(days=1))
    (orphan,) = save(store, item(API, "From the old task.", evidence=(old,)))
    before = position(store)

    preview = preview_prune(store, retention=timedelta(days=30), limit=1)

    assert position(store) == before
    assert preview.pruned_sessions == (old,) and [str(i.item_id) for i in preview.retired] == [orphan]
    done = prune(store, retention=timedelta(days=30), limit=1)
    assert done.sessions == preview.pruned_sessions and [str(i) for i in done.retired] == [orphan]
