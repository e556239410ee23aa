"""The review service on a store in memory: a person's verdict sets an item's trust, as an event."""

from __future__ import annotations

from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import MemoryItem, Trust
from mnemolog.domain.services.review import ItemNotFound, review
from support.memory import item, save

API = "git:example.com/acme/api"


def test_a_verdict_is_recorded_once_with_who_gave_it(memory_store: Store) -> None:
    store = memory_store
    (item_id,) = save(store, item(API, "Run make lint before pushing."))
    target = UUID(item_id)

    accepted = review(store, target, Trust.ACCEPTED, "dana", "checked the Makefile")

    assert accepted.as_dict() == {"item": item_id, "trust": "accepted", "changed": True}
    story = list(store.app.events.get(target))
    assert isinstance(story[-1], MemoryItem.Reviewed) and story[-1].reviewer == "dana" and story[-1].note == "checked the Makefile"
    assert not review(store, target, Trust.ACCEPTED, "dana").changed  # no second event
    assert len(list(store.app.events.get(target))) == len(story)
    assert review(store, target, Trust.REJECTED, "lee").changed
    assert store.app.repository.get(target).trust == Trust.REJECTED
    with pytest.raises(ItemNotFound, match="no memory item"):
        review(store, UUID(int=5), Trust.DOUBTED, "dana")
