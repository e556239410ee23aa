"""What withholding tombstoned values costs a read: search, context and show with 10 tombstones against none.

``pytest -m benchmark -s tests/benchmarks/test_tombstone_read_benchmark.py``
runs it at 100k items; the normal suite at a few hundred (nothing is timed
against a threshold). The goal (issue 26): with 10 tombstones a search takes
≤ 1.2× the same search without. The same store is read with the matcher over
its tombstones and with a matcher over none, interleaved query by query, so
the ratio is of the same views, the same page cache and the same moment.

Eight tombstones are of values no item holds (forget retired the items that
did); two are forgotten in the project with ``forget_value``, which retires
the project's items holding them and leaves the global ones, withheld from
the project's reads (a search that meets one asks again for more hits).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.domain.services import read
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, fingerprint
from support.bench import SCALES, fresh_database, percentile, ratios, report, spread
from support.bench_items import COMMON, MEDIUM, PROJECT, RARE, VOCABULARY, fill
from support.reading import context_for

SIZE = {"ci": 1_500, "full": 100_000}
ROUNDS = {"ci": 3, "full": 15}
QUERIES = [COMMON, MEDIUM, RARE, f"{MEDIUM} {VOCABULARY[90]}", f"{COMMON} {MEDIUM}", "nosuchword"]
# Ten values: eight held by no item (forget retired them), two that a few hundred items hold.
ABSENT = 8
VALUES = [
    "blue-falcon-42", "orion deploy key", "hunter2", "acme staging password", "token 9f8e7d",
    "ssh jump host alpha", "jane doe", "555 0134", VOCABULARY[1500], f"{VOCABULARY[1200]} {VOCABULARY[1201]}",
]


@pytest.fixture(scope="module", params=SCALES)
def scale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def filled(
    request: pytest.FixtureRequest, scale: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Store, str]]:
    backend = str(request.param)
    url = fresh_database(request, f"bench_tomb_{scale}") if backend == "postgres" else None
    store = open_store(Settings(home=tmp_path_factory.mktemp(f"tomb-{backend}-{scale}"), database_url=url))
    fill(store, SIZE[scale])
    key = store.tombstone_key()
    for n, value in enumerate(VALUES[:ABSENT]):  # no item holds them: forget would place the tombstone and nothing else
        digest, width = fingerprint(key, value)
        store.app.save_all(Tombstone(digest=digest, width=width, scope=PROJECT if n % 2 else "global", reason="bench"))
    store.catch_up()
    for value in VALUES[ABSENT:]:  # forgotten in the project: its items retire, the global ones are withheld from its reads
        forget_value(store, value, PROJECT)
    store.catch_up()
    yield store, backend
    store.close()


def _without(store: Store) -> TombstoneMatcher:
    """A matcher over no tombstones, after the same query of the tombstones a store without any makes."""
    return TombstoneMatcher(store.tombstone_key(), store.reads().tombstone_rules()[:0])


def _cold(store: Store) -> TombstoneMatcher:
    """A new matcher over the store's tombstones: it has read no text yet (a CLI process, or hits never read before)."""
    return TombstoneMatcher(store.tombstone_key(), store.reads().tombstone_rules())


def _timed_pairs(actions: dict[str, Callable[[], Any]], rounds: int, turn: int = 0) -> dict[str, list[float]]:
    """Seconds per round of each action; each round starts with the next action (the first to run warms the rest)."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    names = list(actions)
    for r in range(rounds):
        at = (turn + r) % len(names)
        for name in names[at:] + names[:at]:
            start = time.perf_counter()
            actions[name]()
            times[name].append(time.perf_counter() - start)
    return times


def test_search_with_ten_tombstones_against_none(filled: tuple[Store, str], scale: str) -> None:
    """Search p50/p95 with the store's 10 tombstones and with none, and their ratio (goal ≤ 1.2×)."""
    store, backend = filled
    assert len(store.matcher().rules) == len(VALUES)
    times: dict[str, list[float]] = {"none": [], "ten": [], "ten cold": []}
    per_query: dict[str, list[float]] = {}
    for query in QUERIES:  # warm: the page cache, and the store's matcher has read these hits once
        read.search(store.reads(), store.matcher(), query, PROJECT)
        read.search(store.reads(), _without(store), query, PROJECT)
    for round_ in range(ROUNDS[scale]):
        for n, query in enumerate(QUERIES):
            once = _timed_pairs(
                {
                    "none": lambda q=query: read.search(store.reads(), _without(store), q, PROJECT),
                    "ten": lambda q=query: read.search(store.reads(), store.matcher(), q, PROJECT),
                    "ten cold": lambda q=query: read.search(store.reads(), _cold(store), q, PROJECT),
                },
                1,
                turn=round_ + n,
            )
            for name, took in once.items():
                times[name] += took
            per_query.setdefault(query, []).append(once["ten"][0] / once["none"][0])
    b50, b95 = percentile(times["none"], 50), percentile(times["none"], 95)
    lines = [f"without tombstones: p50 {b50 * 1000:.2f} ms, p95 {b95 * 1000:.2f} ms"]
    for name, label in (("ten", "10 tombstones, warm matcher"), ("ten cold", "10 tombstones, new matcher per call")):
        p50, p95 = percentile(times[name], 50), percentile(times[name], 95)
        lines.append(
            f"{label}: p50 {p50 * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms; ratio p50 {p50 / b50:.2f}×, p95 {p95 / b95:.2f}×; "
            f"per call {spread(ratios(times[name], times['none']))}"
        )
    lines.append("warm, median ratio per query: " + ", ".join(f"{q!r} {statistics.median(r):.2f}×" for q, r in per_query.items()))
    report(f"search with 10 tombstones, {backend}, {SIZE[scale]:,} items (goal ≤ 1.2× without)", lines)
    assert read.search(store.reads(), store.matcher(), COMMON, PROJECT)


def test_context_and_show_with_ten_tombstones_against_none(filled: tuple[Store, str], scale: str) -> None:
    """context and show with the store's 10 tombstones and with none, and their ratios."""
    store, backend = filled
    ids = [str(h.item.item_id) for h in read.search(store.reads(), store.matcher(), COMMON, PROJECT)]
    prompt = context_for(store, PROJECT).text  # warm

    def context_with(matcher: Callable[[], TombstoneMatcher]) -> Callable[[], Any]:
        tokenizer = store.ports.tokenizer
        return lambda: read.context(store.reads(), matcher(), tokenizer, "Memory.", PROJECT, 3000)

    def show_with(matcher: Callable[[], TombstoneMatcher]) -> Callable[[], Any]:
        return lambda: [read.show(store.reads(), matcher(), i, PROJECT) for i in ids]

    times = _timed_pairs(
        {
            "context none": context_with(lambda: _without(store)),
            "context ten": context_with(store.matcher),
            "show none": show_with(lambda: _without(store)),
            "show ten": show_with(store.matcher),
        },
        ROUNDS[scale],
    )
    report(
        f"context and show with 10 tombstones, {backend}, {SIZE[scale]:,} items",
        [
            f"context: {statistics.median(times['context ten']) * 1000:.2f} ms with, "
            f"{statistics.median(times['context none']) * 1000:.2f} ms without; ratio {spread(ratios(times['context ten'], times['context none']))}",
            f"show ({len(ids)} items): {statistics.median(times['show ten']) * 1000:.2f} ms with, "
            f"{statistics.median(times['show none']) * 1000:.2f} ms without; ratio {spread(ratios(times['show ten'], times['show none']))}",
        ],
    )
    assert prompt and ids
