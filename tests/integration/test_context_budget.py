"""`context` on a large store: within its token budget, fast, most trusted and most used first.

The 10,000-item store runs on SQLite only: loading it through PostgreSQL's
one-transaction-per-batch catch-up would take most of a minute for the same
check (the context query is the same SQL on both backends; small stores are
checked on both below).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services.cite import save_citation
from support.memory import item, save
from support.reading import context_for
from support.stores import FixedClock, StoreFactory

A = "git:example.com/acme/api"
B = "git:example.com/acme/billing"
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]


def listed(text: str) -> list[str]:
    """Item ids in the order the context lists them."""
    return re.findall(r"\[item:([0-9a-f-]{36})\]", text)


def fill(store: Store, count: int, batch: int = 1000) -> list[str]:
    ids: list[str] = []
    for start in range(0, count, batch):
        items = [
            item(
                A if n % 3 else ("global" if n % 2 else B),
                f"Note {n}: when touching module {WORDS[n % len(WORDS)]}_{n} run the {WORDS[(n * 7) % len(WORDS)]} checks first.",
                title=f"Module {n}",
                kind=("knowledge", "failure", "preference", "task")[n % 4],
            )
            for n in range(start, min(start + batch, count))
        ]
        store.app.save_all(*items)
        ids += [str(i.id) for i in items]
    store.catch_up()
    return ids


@pytest.fixture
def big_store(store_factory: StoreFactory) -> Store:
    return store_factory(clock=FixedClock())


def test_ten_thousand_items_fit_the_budget_with_accepted_and_used_first(big_store: Store) -> None:
    ids = fill(big_store, 10_000)
    in_a = [i for n, i in enumerate(ids) if n % 3]
    accepted, used = in_a[5000:5004], in_a[6000:6003]
    for item_id in accepted:
        chosen = big_store.app.repository.get(UUID(item_id))
        chosen.review(Trust.ACCEPTED, "dev")
        big_store.app.save_all(chosen)
    for uses, item_id in enumerate(used, start=1):
        for _ in range(uses):
            save_citation(big_store, item_ids=[UUID(item_id)], session_ids=[], cited_at=datetime(2026, 11, 1, tzinfo=UTC), source="cli")
    big_store.catch_up()

    context = context_for(big_store, A)

    assert big_store.settings.context_tokens == 3000
    assert count_tokens(context.text) == context.tokens <= 3000
    assert context.tokens > 2500  # the budget is used, not wasted
    shown = listed(context.text)
    assert set(shown[:4]) == set(accepted)  # accepted first
    assert shown[4:7] == list(reversed(used))  # then the most used (3, 2, 1 citations)
    assert context.more == len(in_a) + sum(1 for n in range(10_000) if n % 3 == 0 and n % 2) - len(shown)
    assert "more items are not shown" in context.text
    assert not set(shown) & {i for n, i in enumerate(ids) if n % 3 == 0 and not n % 2}  # no project B item


@pytest.mark.parametrize("budget", [400, 1200, 5000])
def test_any_budget_is_respected(store_factory: StoreFactory, budget: int) -> None:
    store = store_factory(clock=FixedClock())
    fill(store, 120, batch=60)
    context = context_for(store, A, budget)
    assert count_tokens(context.text) <= budget
    assert context.text.startswith("# Memory from earlier sessions (mnemolog)")


def test_the_instructions_come_first_and_an_empty_memory_says_so(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock())
    context = context_for(store, A)
    assert "How to cite what you used" in context.text
    assert "Memory can be stale" in context.text
    assert "Nothing is remembered for this project yet." in context.text
    tiny = context_for(store, A, 50)
    assert count_tokens(tiny.text) <= 50


def test_rejected_doubted_and_retired_items(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock())
    ok, doubted, rejected, retired = save(
        store, item(A, "Keep this one."), item(A, "Maybe true."), item(A, "Wrong advice."), item(A, "Old advice.")
    )
    for item_id, verdict in ((doubted, Trust.DOUBTED), (rejected, Trust.REJECTED)):
        chosen = store.app.repository.get(UUID(item_id))
        chosen.review(verdict, "dev")
        store.app.save_all(chosen)
    gone = store.app.repository.get(UUID(retired))
    gone.retire("superseded")
    store.app.save_all(gone)
    store.catch_up()
    text = context_for(store, A).text
    assert listed(text) == [ok, doubted]  # doubted last, and marked
    assert "(api, doubted)" in text
