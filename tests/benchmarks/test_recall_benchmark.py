"""What hybrid recall costs: a search over items and history excerpts, by words and by meaning, against its parts.

``pytest -m benchmark -s tests/benchmarks/test_recall_benchmark.py`` runs it at
100k items and 200k excerpts (100k sessions of two excerpts each) on both
backends; the normal suite at a few hundred (nothing is timed against a
threshold). In process and warm (the embedding model loaded, the vector matrix
held), as the MCP server answers. Printed per query shape, interleaved with
its baselines in the same repetition: the items-only full-text search (what
search was before history), and with 10 tombstones in force against none.
The goal (issue 26): hybrid p50 ≤ 20 ms and p95 ≤ 50 ms; with tombstones
≤ 1.2× without.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.domain.services import read
from mnemolog.domain.services.recall import recall
from mnemolog.domain.session import Session, SessionFacts
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, fingerprint
from mnemolog.domain.transcript import ItemKind, TranscriptItem
from support.bench import SCALES, fresh_database, interleaved, percentile, ratios, report, spread
from support.bench_items import COMMON, MEDIUM, PROJECT, RARE, VOCABULARY, fill

ITEMS = {"ci": 600, "full": 100_000}
SESSIONS = {"ci": 300, "full": 100_000}  # two excerpts each
ROUNDS = {"ci": 3, "full": 12}
QUERIES = {
    "one common word": COMMON,
    "two words": f"{MEDIUM} {VOCABULARY[90]}",
    "a bug report": f"the {MEDIUM} job fails when {VOCABULARY[300]} is empty after {VOCABULARY[700]} ran {RARE}",
    "nothing matches": "nosuchword anywhere",
}


def _turn(rng: random.Random, n: int) -> str:
    return " ".join(VOCABULARY[int(len(VOCABULARY) * rng.random() ** 4)] for _ in range(n))


def _sessions(store: Store, n: int, batch: int = 500) -> None:
    """``n`` recorded sessions of PROJECT, two long turns each (so two excerpts)."""
    rng = random.Random(11)
    start = datetime(2026, 9, 1, tzinfo=UTC)
    for first in range(0, n, batch):
        saved = []
        for k in range(first, min(first + batch, n)):
            when = start + timedelta(minutes=k)
            facts = SessionFacts(
                source="codex", native_id=f"bench-{k:06d}", path=f"/s/{k}.jsonl", cwd="/w", scope=PROJECT,
                started_at=when, updated_at=when, content_hash=f"h{k}", first_user_message="q",
            )
            transcript = tuple(
                TranscriptItem(kind=kind, text=_turn(rng, 150 if kind is ItemKind.ASSISTANT else 40), line=line)
                for line, kind in enumerate((ItemKind.USER, ItemKind.ASSISTANT, ItemKind.USER, ItemKind.ASSISTANT), start=1)
            )
            saved.append(Session(facts=facts, transcript=transcript))
        store.app.save_all(*saved)
    store.catch_up()


@pytest.fixture(scope="module", params=SCALES)
def scale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def filled(request: pytest.FixtureRequest, scale: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    backend = str(request.param)
    url = fresh_database(request, f"bench_recall_{scale}") if backend == "postgres" else None
    store = open_store(Settings(home=tmp_path_factory.mktemp(f"recall-{backend}-{scale}"), database_url=url))
    fill(store, ITEMS[scale])
    _sessions(store, SESSIONS[scale])
    key = store.tombstone_key()
    for n in range(10):  # values no text holds: what withholding costs, not what it removes
        digest, width = fingerprint(key, f"tombstoned value {n} {VOCABULARY[n]}")
        store.app.save_all(Tombstone(digest=digest, width=width, scope="global", reason="bench"))
    store.catch_up()
    yield store, backend
    store.close()


def test_hybrid_recall_against_items_only_search_and_without_tombstones(filled: tuple[Store, str], scale: str) -> None:
    store, backend = filled
    history = store.recall()
    tombstoned = store.matcher()
    clean = TombstoneMatcher(store.tombstone_key(), ())
    assert history.semantic == "", history.semantic  # the packaged model ranks by meaning here
    lines = []
    for name, query in QUERIES.items():
        recall(store.reads(), history, tombstoned, query, PROJECT, limit=10)  # warm: the matrix held, the texts checked
        times = interleaved(
            {
                "hybrid": lambda q=query: recall(store.reads(), history, tombstoned, q, PROJECT, limit=10),
                "hybrid, no tombstones": lambda q=query: recall(store.reads(), history, clean, q, PROJECT, limit=10),
                "items only (words)": lambda q=query: read.search(store.reads(), clean, q, PROJECT, limit=10),
            },
            ROUNDS[scale] * 5,
        )
        hybrid = times["hybrid"]
        lines.append(
            f"{name:>16}: hybrid p50 {percentile(hybrid, 50) * 1000:.1f} ms, p95 {percentile(hybrid, 95) * 1000:.1f} ms; "
            f"× items-only {spread(ratios(hybrid, times['items only (words)']))}; "
            f"10 tombstones × none {spread(ratios(hybrid, times['hybrid, no tombstones']))}"
        )
    report(f"recall, {backend}, {ITEMS[scale]:,} items + {2 * SESSIONS[scale]:,} excerpts", lines)
