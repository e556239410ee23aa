"""The data keys of a batch are stored with it: one write for the batch, never after its events, kept when it fails."""

from __future__ import annotations

import copy

import pytest
from eventsourcing.persistence import IntegrityError
from support.memory import item
from support.stores import StoreFactory

A = "git:example.com/acme/api"


def test_a_batch_of_new_items_reads_back_in_another_store(store_factory: StoreFactory) -> None:
    writer = store_factory()
    items = [item(A, f"Run make target-{n} before pushing.") for n in range(50)]
    writer.app.save_all(*items)
    assert writer.keys.unsaved_keys() == []  # every key went out with the batch
    reader = store_factory()  # its own key store: only what was stored
    assert [reader.app.find(it.id).text for it in items] == [it.text for it in items]


def test_a_batch_that_conflicts_keeps_its_keys_and_writes_nothing(store_factory: StoreFactory) -> None:
    writer = store_factory()
    first = item(A, "Use uv to install the tools.")
    twin = copy.deepcopy(first)  # the same aggregate created twice: a version conflict
    writer.app.save_all(first)
    fresh = item(A, "Run the linters before a commit.")
    with pytest.raises(IntegrityError):
        writer.app.save_all(fresh, twin)
    assert writer.app.find(fresh.id) is None
    again = item(A, "Pin the tool versions.")
    writer.app.save_all(again)
    reader = store_factory()
    assert reader.app.find(first.id).text == "Use uv to install the tools."
    assert reader.app.find(again.id).text == "Pin the tool versions."
