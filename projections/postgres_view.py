"""The view tables on PostgreSQL: beside the event table, followed by the library's ProjectionRunner.

Imported only when a PostgreSQL store is opened (``eventsourcing.postgres``
and ``psycopg`` are slow to import and useless on SQLite).
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.projection import Projection
from mnemolog.domain.application import MnemologApp
from mnemolog.projections.schema import (
    copied_tables,
    create_statements,
    drop_statements,
    index_statements,
    table,
)
from mnemolog.projections.sql import Sql
from mnemolog.projections.view_store import ViewMixin, open_sqlite_view
from psycopg.sql import SQL

PG_TRACKING_TABLE = "mnemolog_view_tracking"


class PostgresMemoryView(ViewMixin, PostgresTrackingRecorder):
    """The view tables beside the event table (full-text search with a GIN index)."""

    dialect = "postgres"

    def __init__(self, datastore: PostgresDatastore, tracking_table_name: str = PG_TRACKING_TABLE, **kwargs: Any) -> None:
        # The library's ProjectionRunner names the table after the projection
        # (MemoryProjection.name + "_tracking"), which is this same table.
        super().__init__(datastore, tracking_table_name=tracking_table_name, **kwargs)
        self.sql_create_statements.extend(SQL(s) for s in create_statements("postgres"))  # type: ignore[misc]

    def _tracking_table(self) -> str:
        return PG_TRACKING_TABLE

    def refresh_statistics(self) -> None:
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            _analyze(cursor)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Sql]:
        """Reads on the pool's autocommit connection: each statement its own snapshot, no BEGIN/ROLLBACK round trips."""
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            yield Sql(cursor, self.dialect)


def _analyze(cursor: Any) -> None:
    """The planner's statistics of every view table, from what they hold now."""
    for name in copied_tables():
        cursor.execute(f"ANALYZE {table(name)}")


def open_postgres_view(
    params: dict[str, Any],
    count_tokens: Callable[[str], int] | None = None,
    embed_texts: Callable[[list[str]], list[str | None]] | None = None,
) -> PostgresMemoryView:
    """Open (and create on first use) the PostgreSQL view store (``count_tokens`` counts context lines, ``embed_texts`` embeds)."""
    view = PostgresMemoryView(PostgresDatastore(**params))
    view.count_tokens = count_tokens
    view.embed_texts = embed_texts
    view.create_table()
    return view


def counting_view_class(
    count_tokens: Callable[[str], int], embed_texts: Callable[[list[str]], list[str | None]] | None = None
) -> type[PostgresMemoryView]:
    """The view class for the library's ProjectionRunner (which builds the view itself), counting context lines and embedding."""
    members = {"count_tokens": staticmethod(count_tokens), "embed_texts": staticmethod(embed_texts) if embed_texts else None}
    return type("CountingPostgresMemoryView", (PostgresMemoryView,), members)


class MemoryProjection(Projection[Any]):
    """The eventsourcing projection: each event becomes rows, tracked in the same transaction."""

    name = "mnemolog_view"  # the runner's tracking table is then PG_TRACKING_TABLE

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """Apply one event (used by the library's ProjectionRunner on PostgreSQL)."""
        self.view.apply([(domain_event, tracking)])


def _copy_table(source: Any, target: Any, name: str, chunk: int = 5_000) -> None:
    """Stream one table from the scratch SQLite view into PostgreSQL with COPY (never the whole table in memory)."""
    source.execute(f"SELECT * FROM {name}")
    columns = [d[0] for d in source.description]
    with target.copy(f"COPY {name} ({', '.join(columns)}) FROM STDIN") as copy:
        while rows := source.fetchmany(chunk):
            for row in rows:
                copy.write_row(tuple(row))


def rebuild_by_copy(app: MnemologApp, view: PostgresMemoryView) -> int:
    """Project the log into a scratch SQLite view (``load``), then COPY every table in one transaction.

    Each table streams from a SQLite cursor into COPY in chunks; the indexes
    are built after loading; returns the events replayed.
    """
    with tempfile.TemporaryDirectory(prefix="mnemolog-rebuild-") as scratch:
        staging = open_sqlite_view(str(Path(scratch) / "views.sqlite"), view.count_tokens, view.embed_texts)
        try:
            count = staging.load(app, scratch=True)  # PostgreSQL computes its own search column and indexes
            with staging.reading() as source, view.datastore.transaction(commit=True) as cursor:
                for statement in drop_statements():
                    cursor.execute(statement)
                cursor.execute(f"DELETE FROM {PG_TRACKING_TABLE} WHERE application_name = %s", (app.name,))
                for statement in create_statements("postgres", with_indexes=False):
                    cursor.execute(statement)
                for name in copied_tables():
                    _copy_table(source.cursor.sqlite_cursor, cursor, table(name))
                for statement in index_statements("postgres"):
                    cursor.execute(statement)
                _analyze(cursor)  # the planner's statistics of tables just filled (autovacuum comes later)
                if count:
                    view._insert_tracking(cursor, Tracking(app.name, staging.position(app.name)))
        finally:
            staging.datastore.close()
    return count
