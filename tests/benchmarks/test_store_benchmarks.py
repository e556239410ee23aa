"""Benchmarks of the log and its views against raw baselines in the same run: append and rebuild.

``pytest -m benchmark -s tests/benchmarks`` runs them at full size (batches of
1,000; rebuild at 30k and 300k events); the normal suite at a small size. The
goals (issue 15): a batch of 1,000 ≥ 0.5× ``executemany`` of the same rows; one
command ≥ 0.8× a one-row commit; rebuild on PostgreSQL ≤ 3× ``COPY`` out +
``COPY`` in of the same rows, growing linearly from 30k to 300k events.
"""

from __future__ import annotations

import io
import sqlite3
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.domain.memory_item import MemoryItem
from support.bench import (
    SCALES,
    fresh_database,
    interleaved,
    keys_in_one_commit,
    ratios,
    report,
    spread,
    timed,
)
from support.bench_items import item_texts
from support.memory import item

BATCH = {"ci": 200, "full": 1_000}
ROUNDS = {"ci": 3, "full": 7}
ONE_ROUNDS = {"ci": 20, "full": 200}
REBUILD = {"ci": (600, 3_000), "full": (30_000, 300_000)}


def _store(backend: str, home: Path, request: pytest.FixtureRequest, name: str) -> Store:
    url = fresh_database(request, name) if backend == "postgres" else None
    return open_store(Settings(home=home, database_url=url))


def _items(n: int, seed: int) -> list[MemoryItem]:
    return [item(scope, text, title=title) for scope, title, text in item_texts(n, seed)]


def _rows(store: Store, items: list[MemoryItem]) -> list[tuple[Any, ...]]:
    """The rows the log would store for ``items`` (one Added event each)."""
    out = []
    for it in items:
        for event in it.collect_events():
            s = store.app.mapper.to_stored_event(event)
            out.append((str(s.originator_id), s.originator_version, s.topic, bytes(s.state)))
    return out


class RawLog:
    """The same rows in a plain table on the same backend: executemany and one-row commits."""

    def __init__(self, backend: str, store: Store, path: Path) -> None:
        self.backend = backend
        if backend == "postgres":
            import psycopg

            assert store.settings.database_url is not None
            self.conn: Any = psycopg.connect(store.settings.database_url.get_secret_value())
            self.mark = "%s"
        else:
            self.conn = sqlite3.connect(path)
            self.conn.execute("PRAGMA journal_mode=WAL")  # as the event store uses
            self.mark = "?"
        kind = "bytea" if backend == "postgres" else "BLOB"
        self.conn.execute(f"CREATE TABLE raw_events (id TEXT, version INTEGER, topic TEXT, state {kind}, PRIMARY KEY (id, version))")
        self.conn.commit()
        self.insert = f"INSERT INTO raw_events VALUES ({', '.join([self.mark] * 4)})"

    def many(self, rows: list[tuple[Any, ...]]) -> None:
        cursor = self.conn.cursor()
        cursor.executemany(self.insert, rows)
        self.conn.commit()

    def one(self, row: tuple[Any, ...]) -> None:
        self.conn.cursor().execute(self.insert, row)
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope="module", params=SCALES)
def scale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_append_against_raw_inserts(backend: str, scale: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = _store(backend, tmp_path / "home", request, "bench_append")
    raw = RawLog(backend, store, tmp_path / "raw.sqlite")
    size, rounds = BATCH[scale], ROUNDS[scale]
    batches = [_items(size, seed) for seed in range(rounds)]
    raw_batches = [_rows(store, _items(size, 100 + seed)) for seed in range(rounds)]
    ours_batch, base_batch = [], []
    for batch, rows in zip(batches, raw_batches, strict=True):
        ours_batch.append(timed(lambda b=batch: store.app.save_all(*b)))
        base_batch.append(timed(lambda r=rows: raw.many(r)))
    singles = _items(ONE_ROUNDS[scale], 1000)
    raw_singles = _rows(store, _items(ONE_ROUNDS[scale], 2000))
    ours_one, base_one = [], []
    for single, row in zip(singles, raw_singles, strict=True):
        ours_one.append(timed(lambda s=single: store.app.save_all(s)))
        base_one.append(timed(lambda r=row: raw.one(r)))
    raw.close()
    speed = lambda ours, base: ratios(base, ours)  # noqa: E731 - events/s ours / events/s raw = raw time / our time
    report(
        f"append, {backend} (goal: batch ≥ 0.5× executemany, one command ≥ 0.8× a one-row commit)",
        [
            f"batch of {size:,}: mnemolog {size / statistics.median(ours_batch):,.0f} events/s, "
            f"executemany {size / statistics.median(base_batch):,.0f}/s; speed ratio {spread(speed(ours_batch, base_batch))}",
            f"one command ({len(singles)} commands): mnemolog {1 / statistics.median(ours_one):,.0f} events/s, "
            f"one-row commit {1 / statistics.median(base_one):,.0f}/s; speed ratio {spread(speed(ours_one, base_one))}",
        ],
    )
    assert store.app.max_notification_id() == size * rounds + len(singles)
    store.close()


def _fill_log(store: Store, events: int) -> None:
    """About ``events`` events straight into the log: items added, a third revised, a sixth retired."""
    made = 0
    seed = 0
    while made < events:
        items = _items(max(1, min(1000, (events - made) * 2 // 3)), 10_000 + seed)  # 1.5 events per item
        seed += 1
        for n, it in enumerate(items):
            if n % 3 == 0:
                it.revise(title=it.title, text=it.text + " (revised)", keywords=("bench",), evidence=(), valid_from=None, consolidation_id=None, reason="bench")
            if n % 6 == 0:
                it.retire("bench")
        pending = [e for it in items for e in it.collect_events()]
        with keys_in_one_commit(store):
            stored = [store.app.mapper.to_stored_event(e) for e in pending]
        store.app.recorder.insert_events(stored)
        made += len(pending)


def _raw_copy(store: Store) -> Callable[[], None]:
    """COPY every stored event out, then COPY the same rows into a scratch table (PostgreSQL)."""
    import psycopg

    assert store.settings.database_url is not None
    url = store.settings.database_url.get_secret_value()
    events = store.app.recorder.events_table_name  # type: ignore[attr-defined]

    def run() -> None:
        with psycopg.connect(url) as conn, conn.cursor() as cur:
            buffer = io.BytesIO()
            with cur.copy(f"COPY (SELECT * FROM {events}) TO STDOUT") as copy:
                for data in copy:
                    buffer.write(data)
            cur.execute(f"CREATE TEMP TABLE raw_copy (LIKE {events})")
            with cur.copy("COPY raw_copy FROM STDIN") as copy:
                copy.write(buffer.getvalue())
            cur.execute("DROP TABLE raw_copy")

    return run


def _raw_sqlite_copy(store: Store, path: Path) -> Callable[[], None]:
    """Read every stored event and insert the same rows into a scratch table (SQLite)."""

    def run() -> None:
        source = sqlite3.connect(Path(store.settings.home) / "events.sqlite")
        rows = source.execute("SELECT * FROM stored_events")
        target = sqlite3.connect(path)
        target.execute("DROP TABLE IF EXISTS raw_copy")
        target.execute("CREATE TABLE raw_copy (id TEXT, version INTEGER, topic TEXT, state BLOB)")
        target.executemany("INSERT INTO raw_copy VALUES (?, ?, ?, ?)", rows)
        target.commit()
        target.close()
        source.close()

    return run


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_rebuild_against_raw_copy(backend: str, scale: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    lines, medians, totals = [], [], []
    for events, rounds in zip(REBUILD[scale], (3, 1), strict=True):  # the big log: one round (minutes)
        store = _store(backend, tmp_path / f"home-{events}", request, f"bench_rebuild_{events}")
        _fill_log(store, events)
        total = store.app.max_notification_id()
        totals.append(total)
        baseline = _raw_copy(store) if backend == "postgres" else _raw_sqlite_copy(store, tmp_path / f"raw-{events}.sqlite")
        times = interleaved({"rebuild": store.rebuild, "raw": baseline}, rounds)
        medians.append(statistics.median(times["rebuild"]))
        raw_name = "COPY out + COPY in" if backend == "postgres" else "read + executemany into a table"
        lines.append(
            f"rebuild of {total:,} events: {spread(times['rebuild'])} s; {raw_name} {spread(times['raw'], '{:.3f}')} s; "
            f"ratio {spread(ratios(times['rebuild'], times['raw']))}"
        )
        assert store.reads().counts().items > 0
        store.close()
    small, big = totals
    lines.append(f"growth {small:,} → {big:,} events: {medians[1] / medians[0]:.1f}× for {big / small:.0f}× the events (linear: ≈ {big / small:.0f}×)")
    report(f"rebuild, {backend} (goal ≤ 3× raw, linear growth)", lines)
