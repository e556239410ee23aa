"""Search ranks a bounded number of matches, yet a project whose items are few among them still finds them all."""

from __future__ import annotations

import pytest
from mnemolog.projections import search as search_module
from support.memory import item, save
from support.reading import search_ids
from support.stores import FixedClock, StoreFactory

A = "git:example.com/acme/api"
B = "git:example.com/acme/billing"


def test_older_items_of_a_sparse_project_are_found_past_the_ranking_bound(store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_module, "RANKED", 10)
    store = store_factory(clock=FixedClock())
    ours = save(store, *[item(A, f"Retry the flaky upload {n} twice.") for n in range(5)])
    save(store, *[item(B, f"Retry the flaky invoice export {n}.") for n in range(60)])  # newer: ranked first
    assert sorted(search_ids(store, "flaky retry", A, limit=20)) == sorted(ours)
    assert len(search_ids(store, "flaky", B, limit=50)) == 50
