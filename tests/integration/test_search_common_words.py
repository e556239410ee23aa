"""Search where a word is in most items: the counts that bound its work follow every change, and rank as before.

SQLite counts, per word, the search rows holding it (``search_words``): a word
in half of the rows or more has no bm25 weight, so it only selects. The counts
must follow adds, revisions, retirements and a rebuild; PostgreSQL ranks the
newest matches its GIN index finds, as a scan of every row would.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import groupby
from typing import Any

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.projections import search as search_module
from mnemolog.projections import search_words
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads
from support.memory import item, save
from support.reading import search
from support.stores import FixedClock, StoreFactory

A = "git:example.com/acme/api"
B = "git:example.com/acme/billing"
COMMON, MEDIUM, RARE = "deploy", "cache", "flaky"
FILLER = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


def _text(rng: random.Random, n: int) -> str:
    words = [rng.choice(FILLER) for _ in range(rng.randint(4, 14))]
    if n % 10:  # the common word in 90% of the items, once to three times
        words += [COMMON] * rng.randint(1, 3)
    if n % 3 == 0:
        words += [MEDIUM] * rng.randint(1, 3)
    if n % 17 == 0:
        words.append(RARE)
    rng.shuffle(words)
    return " ".join(words) + "."


def _items(rng: random.Random, count: int) -> list[MemoryItem]:
    scopes = [A, A, "global", B]
    return [
        item(scopes[n % 4], _text(rng, n), title=f"Note {n} {rng.choice(FILLER)}", keywords=(rng.choice(FILLER),) if n % 5 == 0 else ())
        for n in range(count)
    ]


def _words_recounted(store: Store) -> dict[str, int]:
    reads = ViewReads(store.view)
    counted: Counter[str] = Counter()
    for row in reads.query(f"SELECT title, text, keywords FROM {table('search_rows')}"):
        counted.update(search_words.words(str(row[c] or "") for c in ("title", "text", "keywords")))
        counted[search_words.ROWS] += 1
    return dict(counted)


def _kept_in_step(store: Store) -> None:
    reads = ViewReads(store.view)
    kept = {str(r["word"]): int(r["n"]) for r in reads.query(f"SELECT word, n FROM {table('search_words')}")}
    assert kept == _words_recounted(store) and kept[search_words.ROWS] > 0


@pytest.mark.parametrize("backend", ["sqlite"])  # PostgreSQL ranks with ts_rank and keeps no word counts
def test_the_word_counts_follow_every_change_and_a_rebuild(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock())
    rng = random.Random(3)
    items = _items(rng, 60)
    save(store, *items[:30])
    save(store, *items[30:])
    _kept_in_step(store)
    for n, it in enumerate(items[:24]):
        if n % 3 == 0:
            it.revise(title=it.title, text=_text(rng, n + 1), keywords=("golf",), evidence=(), valid_from=None,
                      consolidation_id=None, reason="test", by=EditedBy.USER)  # fmt: skip
        elif n % 3 == 1:
            it.retire("test", by=EditedBy.USER)
    store.app.save_all(*items[:24])
    store.catch_up()
    _kept_in_step(store)
    assert store.rebuild() == store.app.max_notification_id()
    _kept_in_step(store)


def _hits(store: Store, query: str, project: str | None, limit: int) -> list[tuple[str, float]]:
    return [(str(h.item.item_id), h.score) for h in search(store, query, project or A, limit=limit)]


@pytest.mark.parametrize("limit", [5, 40])
def test_a_word_in_most_items_ranks_as_bm25_ranks_it(store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """With the word taken as weightless (``WALKED`` 1), every query lists what full ranking lists.

    Scores may differ only by the weightless word's own 1e-6-scaled part, so ties can be
    broken differently (newest first); a query of that word alone lists its matches newest first.
    """
    store = store_factory(clock=FixedClock())
    rng = random.Random(11)
    ids = save(store, *_items(rng, 120))
    monkeypatch.setattr(search_module, "RANKED", 30)  # the bounds matter at this size
    queries = [f"{COMMON} {MEDIUM}", f"{COMMON} {RARE}", f"{MEDIUM} {COMMON} golf", f"{COMMON} nosuchword", MEDIUM]
    full = {q: _hits(store, q, A, limit) for q in [*queries, COMMON]}
    monkeypatch.setattr(search_words, "WALKED", 1)
    if store.view.dialect == "sqlite":
        with store.view.reading() as sql:
            assert search_words.weightless(sql, [COMMON, MEDIUM, RARE]) == {COMMON}
    for query in queries:
        light = _hits(store, query, A, limit)
        assert light, query
        assert [round(s, 4) for _, s in light] == [round(s, 4) for _, s in full[query]], query
        for _, group in groupby(light, key=lambda hit: hit[1]):  # ties: the newest first
            same = [i for i, _ in group]
            assert sorted(same, key=ids.index, reverse=True) == same, query
        assert {i for i, s in light if round(s, 4) > round(light[-1][1], 4)} == {
            i for i, s in full[query] if round(s, 4) > round(full[query][-1][1], 4)
        }, query
    alone = [i for i, _ in _hits(store, COMMON, A, limit)]
    assert len(alone) == limit
    if store.view.dialect == "sqlite":
        assert alone == sorted(alone, key=ids.index, reverse=True)  # no weight: the newest matches first
    else:
        assert alone == [i for i, _ in full[COMMON]]  # ts_rank is unchanged


def test_postgres_finds_the_newest_matches_a_scan_of_every_row_finds(store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL: the newest matches ranked are those filtering every row by ``@@`` finds (SQLite: the FTS5 index as before)."""
    store = store_factory(clock=FixedClock())
    rng = random.Random(5)
    save(store, *_items(rng, 150))
    monkeypatch.setattr(search_module, "RANKED", 12)
    reads = ViewReads(store.view)
    for query, any_term in [(COMMON, False), (MEDIUM, False), (f"{COMMON} {MEDIUM}", False), (f"{MEDIUM} {RARE}", False),
                            (f"{RARE} nosuchword", True), (f"{MEDIUM} {RARE} golf", False)]:  # fmt: skip
        for project in (A, B):
            got = [str(h.item.item_id) for h in search(store, query, project, limit=8)]
            if any_term:  # no item has both words: the items with either
                either = {str(h.item.item_id) for h in search(store, RARE, project, limit=50)}
                assert got and set(got) <= either and len(got) == min(8, len(either))
            if store.view.dialect != "postgres":
                continue
            words = query.split()
            text = (" or " if any_term else " ").join(words)
            newest: list[dict[str, Any]] = reads.query(
                f"SELECT item_id, id, ts_rank(document, q) AS score FROM {table('search_rows')}, websearch_to_tsquery('english', ?) AS q "
                "WHERE document @@ q AND scope IN (?, 'global') ORDER BY id DESC LIMIT 12",
                [text, project],
            )
            best = sorted(newest, key=lambda r: (-r["score"], -r["id"]))[:8]
            assert got == [str(r["item_id"]) for r in best], (query, project)
