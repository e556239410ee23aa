"""Full-text search over current memory, on SQLite (FTS5) and PostgreSQL (tsvector + GIN)."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.read import hit_dict
from support.memory import item, save
from support.reading import search, search_ids
from support.stores import FixedClock, StoreFactory

A = "git:example.com/acme/api"
B = "git:example.com/acme/billing"


@pytest.fixture
def seeded(store_factory: StoreFactory) -> tuple:
    store = store_factory(clock=FixedClock())
    ids = save(
        store,
        item(A, "Run make test-fast before pushing; the full test suite takes twenty minutes.",
             title="Fast tests before pushing", keywords=("make", "tests")),
        item(A, "The retry test is flaky when the network mock is slow; rerun it once.",
             kind="failure", title="Flaky retry test"),
        item(A, "Migrations live in db/migrations and run with alembic upgrade head.",
             title="Database migrations", keywords=("alembic",), trust=Trust.ACCEPTED),
        item(B, "Billing tests need the Stripe sandbox; run make test with STRIPE_SANDBOX=1.",
             title="Billing tests"),
        item("global", "The user wants tests run before every commit.", kind="preference"),
    )
    return store, ids


def test_hits_are_ranked_scoped_and_carry_id_kind_trust_and_validity(seeded: tuple) -> None:
    store, ids = seeded
    hits = search(store, "tests", A)
    found = [str(h.item.item_id) for h in hits]
    assert ids[3] not in found  # project B's item never shows in A
    assert set(found) == {ids[0], ids[1], ids[4]}
    assert found[0] == ids[0]  # the word in title, keywords and text ranks first
    first = hits[0].item
    assert (first.kind, first.trust, first.status, first.scope) == ("knowledge", "proposed", "active", A)
    assert first.valid_from == datetime(2026, 10, 1, tzinfo=UTC)
    assert first.valid_to is None
    assert hits[0].score > hits[-1].score
    data = hit_dict(hits[0])
    assert {"id", "kind", "trust", "valid_from", "valid_to", "score"} <= data.keys()


def test_kind_filter_and_all_words_then_any_word(seeded: tuple) -> None:
    store, ids = seeded
    assert search_ids(store, "tests", A, kind="preference") == [ids[4]]
    assert search_ids(store, "alembic migrations", A) == [ids[2]]
    # No item has both words: items with either are ranked instead.
    either = set(search_ids(store, "alembic flaky", A))
    assert either == {ids[1], ids[2]}
    with pytest.raises(ValueError, match="unknown kind"):
        search(store, "tests", A, kind="nonsense")


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "tests AND (", "NEAR(tests", "-tests", "tests*", "title:tests", "^tests", "'; DROP TABLE x; --", "", "   ", "!!!", "a & b | c"],
)
def test_query_syntax_never_reaches_the_user(seeded: tuple, query: str) -> None:
    store, _ = seeded
    hits = search(store, query, A)
    assert all(h.item.scope in (A, "global") for h in hits)
    if "tests" in query:  # the word is still searched for, as a word: the syntax around it is not an error
        assert hits, f"{query!r} found nothing"
        assert all("test" in f"{h.item.title} {h.item.text}".lower() for h in hits)


def test_retired_invalidated_and_forgotten_items_are_not_found(seeded: tuple) -> None:
    store, ids = seeded
    retired = store.app.repository.get(UUID(ids[1]))
    retired.retire("wrong")
    store.app.save_all(retired)
    store.catch_up()
    assert ids[1] not in search_ids(store, "flaky retry", A)

    forget_value(store, "alembic upgrade head", "global")
    assert search(store, "migrations", A) == []
    assert search(store, "alembic", A) == []


def test_a_tombstone_placed_in_project_b_does_not_hide_a(seeded: tuple) -> None:
    store, ids = seeded
    forget_value(store, "make test-fast", B)
    assert ids[0] in search_ids(store, "pushing", A)
