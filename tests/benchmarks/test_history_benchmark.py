"""Benchmark of ``explain`` of one item as the log grows tenfold, against a read of the whole log in the same run.

``pytest -m benchmark -s tests/benchmarks`` runs it at 10k and 100k events;
the normal suite at a few thousand (no timing assertions). The item is the
same at both sizes (two runs, two evidence sessions, a note, a citation):
only the rest of the log grows. Each explain runs in a store opened for it,
as ``mnemolog explain`` does (a long-lived store's key cache would hide reads). Goal (issue 24): explain at 100k events
≤ 2× explain at 10k, because it reads that item's history, not the log.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.projections.log_reader import log_events
from support.bench import SCALES, fresh_database, keys_in_one_commit, ms, report, timed
from support.bench_items import item_texts
from support.history_world import story_world
from support.memory import item
from support.stores import FixedClock

SIZES = {"ci": (1_000, 5_000), "full": (10_000, 100_000)}
ROUNDS = {"ci": 3, "full": 15}


@pytest.fixture(params=SCALES)
def scale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _grow_log(store: Store, events: int, seed: int) -> None:
    """About ``events`` more events straight into the log (other items: added, a third revised, a sixth retired)."""
    made = 0
    while made < events:
        items = [item(s, text, title=title) for s, title, text in item_texts(max(1, min(1000, (events - made) * 2 // 3)), seed)]
        seed += 1
        for n, it in enumerate(items):
            if n % 3 == 0:
                it.revise(title=it.title, text=it.text + " (revised)", keywords=("bench",), evidence=(), valid_from=None,
                          consolidation_id=None, reason="bench")
            if n % 6 == 0:
                it.retire("bench")
        pending = [e for it in items for e in it.collect_events()]
        with keys_in_one_commit(store):
            stored = [store.app.mapper.to_stored_event(e) for e in pending]
        store.app.recorder.insert_events(stored)
        made += len(pending)


def _explain_in_a_fresh_store(settings: Settings, item_id: UUID) -> Callable[[], float]:
    """Seconds of one ``explain`` in a store opened for it, as the CLI's process opens one (its key cache starts empty)."""

    def run() -> float:
        store = open_store(settings)
        try:
            store.catch_up()
            history, matcher = store.history(), store.matcher()
            return timed(lambda: history.explain(item_id, matcher))
        finally:
            store.close()

    return run


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_explain_reads_only_the_items_history(backend: str, scale: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = fresh_database(request, "bench_history") if backend == "postgres" else None
    settings = Settings(home=tmp_path / "home", database_url=url)
    store, (item_id, _), _, _ = story_world(open_store(settings, clock=FixedClock()), tmp_path)
    expected = store.history().explain(item_id, store.matcher())
    explain = _explain_in_a_fresh_store(settings, item_id)
    lines, explain_medians, fastest, sizes = [], [], [], []
    for n, size in enumerate(SIZES[scale]):
        _grow_log(store, size - store.log_position(), 10_000 * (n + 1))
        store.rebuild()  # the bulk path: the views (and their links) as a fresh process would find them
        sizes.append(store.log_position())
        times: dict[str, list[float]] = {"explain": [], "log read": []}
        for _ in range(ROUNDS[scale]):  # interleaved: a busy moment of the machine hits both alike
            times["explain"].append(explain())
            times["log read"].append(timed(lambda: sum(1 for _ in log_events(store.app))))  # what explain read before: the whole log
        assert store.history().explain(item_id, store.matcher()) == expected  # the same story, however long the log
        explain_medians.append(statistics.median(times["explain"]))
        fastest.append(min(times["explain"]))
        lines.append(f"{sizes[-1]:,} events: explain {ms(times['explain'])}; a read of the whole log {ms(times['log read'])}")
    small, big = explain_medians
    lines.append(
        f"explain at {sizes[1]:,} / at {sizes[0]:,} events: {big / small:.2f}× (medians; fastest runs {fastest[1] / fastest[0]:.2f}×) "
        f"for {sizes[1] / sizes[0]:.0f}× the events (goal ≤ 2×)"
    )
    report(f"explain of one item, {backend} (goal: ≤ 2× from 10k to 100k events)", lines)
    store.close()
