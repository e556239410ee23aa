"""How PostgreSQL plans a search: with fresh statistics of the view tables, and for the words asked.

Until autovacuum gets to a table filled at once, the planner takes a word in
most items for a rare one and reads all of its matches (80 ms at 100k items,
against 3 ms with the statistics): a catch-up of many events and a rebuild
refresh them. And a statement psycopg has prepared (after five runs) may get
one generic plan for every word: a rare word then scanned every row (9.5 ms at
10k items, 1.7 planned for it). See docs/performance.md, "search".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.projections import view_store
from mnemolog.projections.schema import table
from mnemolog.projections.search import _postgres
from mnemolog.projections.sql import Sql
from support.bench_items import COMMON, PROJECT, RARE, fill
from support.stores import FixedClock, reset_postgres


def _planned_rows(store) -> float:
    """How many search rows the planner believes there are (``reltuples``: set by ANALYZE, -1 before any)."""
    with store.view.reading() as sql:
        row = sql.one("SELECT reltuples FROM pg_class WHERE relname = ?", [table("search_rows")])
    assert row is not None
    return float(row["reltuples"])


def test_a_large_catch_up_and_a_rebuild_refresh_the_planners_statistics(postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reset_postgres(postgres_dsn)
    monkeypatch.setattr(view_store, "ANALYZE_AFTER", 100)
    store = open_store(Settings(home=tmp_path / "home", database_url=postgres_dsn), clock=FixedClock())
    try:
        fill(store, 50)  # a catch-up of fewer events than that: autovacuum's business
        assert _planned_rows(store) <= 0
        fill(store, 150)
        assert _planned_rows(store) == 200
        fill(store, 40)
        assert _planned_rows(store) == 200
        store.rebuild()
        assert _planned_rows(store) == 240
    finally:
        store.close()


def test_a_search_is_planned_for_its_words_each_time(postgres_dsn: str, tmp_path: Path) -> None:
    reset_postgres(postgres_dsn)
    store = open_store(Settings(home=tmp_path / "home", database_url=postgres_dsn), clock=FixedClock())
    try:
        fill(store, 200)
        with store.view.datastore.get_connection() as conn, conn.cursor() as cursor:  # one session: its prepared statements
            sql = Sql(cursor, "postgres")
            found = [len(_postgres(sql, [word], False, PROJECT, None, 10)) for word in [COMMON, RARE] * 5]
            prepared = sql.rows("SELECT statement FROM pg_prepared_statements")
        assert found[0] == 10 and found[1] >= 1
        assert not [p for p in prepared if "ts_rank" in p["statement"]], "the search got a plan kept for any word"
    finally:
        store.close()
