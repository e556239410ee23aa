"""Benchmarks: each prints a ratio against a raw baseline measured in the same run.

Not part of the default run: ``pytest -m benchmark -s tests/benchmarks``.
Nothing here asserts a time; the numbers are for reading.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from mnemolog.adapters.bootstrap import open_store
from mnemolog.adapters.settings import Settings
from mnemolog.domain.session import Session
from support.scenarios import TRANSCRIPT, facts

pytestmark = pytest.mark.benchmark

BATCHES, PER_BATCH = 20, 100


def _timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def test_append_and_rebuild_against_raw_sqlite(tmp_path: Path) -> None:
    store = open_store(Settings(home=tmp_path / "home"))
    sessions = [
        [Session(facts=facts(f"bench-{b}-{i}"), transcript=TRANSCRIPT) for i in range(PER_BATCH)] for b in range(BATCHES)
    ]
    appended = _timed(lambda: [store.app.save_all(*batch) for batch in sessions])
    stored = [
        (str(n.originator_id), n.originator_version, n.topic, bytes(n.state))
        for n in store.app.recorder.select_notifications(start=1, limit=BATCHES * PER_BATCH)
    ]

    raw = sqlite3.connect(tmp_path / "raw.sqlite")
    raw.execute("PRAGMA journal_mode=WAL")  # as the event store uses
    raw.execute("CREATE TABLE events (id TEXT, version INTEGER, topic TEXT, state BLOB, PRIMARY KEY (id, version))")

    def raw_append() -> None:
        for b in range(BATCHES):
            raw.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", stored[b * PER_BATCH : (b + 1) * PER_BATCH])
            raw.commit()

    baseline = _timed(raw_append)
    rebuilt = _timed(store.rebuild)
    raw_read = _timed(lambda: [json.loads(row[0]) for row in raw.execute("SELECT state FROM events")])
    events = len(stored)
    print(
        f"\nappend {events} events: mnemolog {events / appended:,.0f}/s, raw executemany {events / baseline:,.0f}/s, "
        f"time ratio {appended / baseline:.2f}"
        f"\nrebuild {events} events: mnemolog {events / rebuilt:,.0f}/s, raw read+decode {events / raw_read:,.0f}/s, "
        f"time ratio {rebuilt / raw_read:.2f}"
    )
    store.close()


def test_append_and_rebuild_against_raw_postgres(tmp_path: Path, postgres_dsn: str) -> None:
    import psycopg
    from support.stores import reset_postgres

    reset_postgres(postgres_dsn)
    store = open_store(Settings(home=tmp_path / "home", database_url=postgres_dsn))
    sessions = [
        [Session(facts=facts(f"bench-{b}-{i}"), transcript=TRANSCRIPT) for i in range(PER_BATCH)] for b in range(BATCHES)
    ]
    appended = _timed(lambda: [store.app.save_all(*batch) for batch in sessions])
    stored = [
        (str(n.originator_id), n.originator_version, n.topic, bytes(n.state))
        for n in store.app.recorder.select_notifications(start=1, limit=BATCHES * PER_BATCH)
    ]
    with psycopg.connect(postgres_dsn) as raw:
        raw.execute("CREATE TABLE raw_events (id text, version int, topic text, state bytea, PRIMARY KEY (id, version))")
        raw.commit()

        def raw_append() -> None:
            with raw.cursor() as cur:
                for b in range(BATCHES):
                    cur.executemany("INSERT INTO raw_events VALUES (%s, %s, %s, %s)", stored[b * PER_BATCH : (b + 1) * PER_BATCH])
                    raw.commit()

        baseline = _timed(raw_append)
        rebuilt = _timed(store.rebuild)
        raw_read = _timed(lambda: [json.loads(bytes(r[0])) for r in raw.execute("SELECT state FROM raw_events")])
    events = len(stored)
    print(
        f"\nPostgreSQL append {events} events: mnemolog {events / appended:,.0f}/s, raw executemany {events / baseline:,.0f}/s, "
        f"time ratio {appended / baseline:.2f}"
        f"\nPostgreSQL rebuild (replay + COPY) {events} events: mnemolog {events / rebuilt:,.0f}/s, raw read+decode "
        f"{events / raw_read:,.0f}/s, time ratio {rebuilt / raw_read:.2f}"
    )
    store.close()
