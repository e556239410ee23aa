"""Listing on a store in memory: filters, pinned first, and a forgotten value never listed."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.edit import pin_item
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.listing import BadFilter, list_items, list_sessions, list_tombstones
from support.memory import extracted_session, item, save
from support.sessions import thread_id

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"


def ids(rows: list) -> list[str]:
    return [str(r.item_id) for r in rows]


def test_items_are_filtered_pinned_first_and_withheld_where_a_tombstone_reaches(memory_store: Store) -> None:
    store = memory_store
    lint, global_secret, web = save(
        store,
        item(API, "Run make lint before pushing."),
        item("global", "Deploy keys live in vault path blue-falcon.", kind="preference"),
        item(WEB, "Web builds with vite."),
    )
    pin_item(store, UUID(lint))

    assert ids(list_items(store.reads(), store.matcher(), API)) == [lint, global_secret]
    assert set(ids(list_items(store.reads(), store.matcher(), None))) == {lint, global_secret, web}
    assert ids(list_items(store.reads(), store.matcher(), API, kind="preference")) == [global_secret]
    forget_value(store, "blue-falcon", API)  # a project tombstone: P's readers never see the global item
    assert ids(list_items(store.reads(), store.matcher(), API)) == [lint]
    assert global_secret in ids(list_items(store.reads(), store.matcher(), WEB))  # other projects still read it
    (tomb,) = list_tombstones(store.reads(), API)
    assert tomb.scope == API and list_tombstones(store.reads(), WEB) == []
    with pytest.raises(BadFilter, match="unknown trust"):
        list_items(store.reads(), store.matcher(), API, trust="maybe")


def test_sessions_are_listed_with_their_state(memory_store: Store) -> None:
    store = memory_store
    extracted_session(store, thread_id(1), API, "Did a task.", updated_at=datetime(2026, 10, 30, tzinfo=UTC))
    listed = list_sessions(store.reads(), store.clock(), EligibilityPolicy(), API)
    assert [(s.session.native_id, s.state) for s in listed] == [(thread_id(1), "extracted")]
    assert list_sessions(store.reads(), store.clock(), EligibilityPolicy(), API, status="failed") == []
    assert list_sessions(store.reads(), store.clock(), EligibilityPolicy(), WEB) == []
    assert listed[0].as_dict()["native_id"] == thread_id(1)
