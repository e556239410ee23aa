"""PostgreSQL plans a search by its statistics of the view tables: a catch-up of many events and a rebuild refresh them.

Until autovacuum gets to a table filled at once, the planner takes a word in
most items for a rare one and reads all of its matches (80 ms at 100k items,
against 3 ms with the statistics: docs/performance.md, "search").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemolog.adapters.bootstrap import open_store
from mnemolog.adapters.settings import Settings
from mnemolog.projections import view_store
from mnemolog.projections.schema import table
from support.bench_items import fill
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
