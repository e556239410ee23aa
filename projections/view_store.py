"""Where the projection tables live, and how they follow the log.

The view tables and the tracking record are written in one transaction, so
each event is applied exactly once: replaying a position that is already
tracked fails (the library's single-row tracking refuses to go backwards) and
rolls the whole batch back.

The PostgreSQL view lives in ``postgres_view`` and is imported only when a
PostgreSQL store is opened: ``psycopg`` costs start-up time a SQLite user
should not pay.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from eventsourcing.persistence import IntegrityError, OperationalError, Tracking
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder, SQLiteTransaction
from mnemolog.domain.application import MnemologApp
from mnemolog.projections.schema import (
    SCHEMA_TABLE,
    create_statements,
    drop_statements,
    index_statements,
    schema_version,
    search_fill_statements,
)
from mnemolog.projections.sql import Sql
from mnemolog.projections.view_rows import ViewRows


class MemoryView(Protocol):
    """What every backend's view store offers."""

    dialect: str
    count_tokens: Callable[[str], int] | None
    replayed_on_open: tuple[int, int] | None

    def apply(self, batch: Sequence[tuple[Any, Tracking]]) -> None:
        """Apply events and record the last position, in one transaction."""

    @contextlib.contextmanager
    def reading(self) -> Iterator[Sql]:
        """A read-only transaction."""
        yield  # type: ignore[misc]

    def position(self, application_name: str) -> int:
        """The last applied notification id (0 when none)."""

    def load(self, app: MnemologApp, *, scratch: bool = False) -> int:
        """Drop every view table and project the whole log into new ones, in one transaction; the events read."""

    def close(self) -> None:
        """Release the view store's connections."""

    def built_version(self) -> str | None:
        """The schema version the views were built with (None: before versions were recorded)."""

    def record_version(self) -> None:
        """Record that the views now follow this code's schema version."""

    def refresh_statistics(self) -> None:
        """Let the database's planner see the tables as they now are (after many rows changed at once)."""


class ViewMixin:
    """The view operations shared by both backends (over the tracking recorder's datastore)."""

    dialect: str
    datastore: Any
    # Counts context lines as items are projected (the store gives the o200k counter; None: not counted).
    count_tokens: Callable[[str], int] | None = None
    # Embeds item and excerpt texts as they are projected (a vector as stored per text; None: no model).
    embed_texts: Callable[[list[str]], list[str | None]] | None = None
    replayed_on_open: tuple[int, int] | None = None  # (events replayed, position) when open_views rebuilt

    def apply(self, batch: Sequence[tuple[Any, Tracking]]) -> None:
        if not batch:
            return
        # every event class: imported only when there are events to apply
        from mnemolog.projections.memory_view import apply_event

        with self._writing() as cursor:
            rows = ViewRows(Sql(cursor, self.dialect), self._line_tokens(), self.embed_texts)
            for domain_event, _ in batch:
                apply_event(rows, domain_event)
            rows.flush()
            self._insert_tracking(cursor, batch[-1][1])  # type: ignore[attr-defined]

    def _writing(self) -> contextlib.AbstractContextManager[Any]:
        return self.datastore.transaction(commit=True)  # type: ignore[no-any-return]

    def _line_tokens(self) -> Callable[[dict[str, Any]], dict[str, int]] | None:
        from mnemolog.projections.memory_view import context_line_tokens  # as lazily as apply_event

        return context_line_tokens(self.count_tokens) if self.count_tokens is not None else None

    @contextlib.contextmanager
    def reading(self) -> Iterator[Sql]:
        with self.datastore.transaction(commit=False) as cursor:
            yield Sql(cursor, self.dialect)

    def position(self, application_name: str) -> int:
        return self.max_tracking_id(application_name) or 0  # type: ignore[attr-defined]

    def _tracking_table(self) -> str:
        raise NotImplementedError

    def load(self, app: MnemologApp, *, scratch: bool = False) -> int:
        """Drop every view table and project the whole log into new ones, in one transaction; the events read.

        The rebuild's bulk projection: the same rules as ``apply`` (``apply_event``
        over a ``ViewRows``), but the log is read ``LOAD_PAGE`` events at a time and
        rows are written only once ``LOAD_WINDOW`` of them are held (bounded memory;
        a row an earlier window wrote is read back when a later event needs it).
        The tables are made without indexes or search triggers; the full-text index
        is filled in one pass and the indexes built after the load; the tracking
        position is set once. A ``scratch`` view (one that is copied elsewhere) gets
        neither the search index nor the secondary indexes.
        """
        from mnemolog.projections.memory_view import apply_event

        count = last = 0
        with self.datastore.transaction(commit=True) as cursor:
            for statement in drop_statements():
                cursor.execute(statement)
            mark = "?" if self.dialect == "sqlite" else "%s"
            cursor.execute(f"DELETE FROM {self._tracking_table()} WHERE application_name = {mark}", (app.name,))
            for statement in create_statements(self.dialect, with_indexes=False):
                cursor.execute(statement)
            rows = ViewRows(Sql(cursor, self.dialect), self._line_tokens(), self.embed_texts)
            to_domain_event = app.mapper.to_domain_event
            while page := app.recorder.select_notifications(start=last + 1, limit=LOAD_PAGE):
                for notification in page:
                    apply_event(rows, to_domain_event(notification))
                count += len(page)
                last = page[-1].id
                if len(rows) >= LOAD_WINDOW:
                    rows.flush()
            rows.flush()
            for statement in [] if scratch else [*search_fill_statements(self.dialect), *index_statements(self.dialect)]:
                cursor.execute(statement)
            if last:
                self._insert_tracking(cursor, Tracking(app.name, last))  # type: ignore[attr-defined]
        return count

    def close(self) -> None:
        self.datastore.close()

    def refresh_statistics(self) -> None:
        return None  # SQLite: the search is FTS5's, and the other reads go by primary key or a chosen index

    def built_version(self) -> str | None:
        with self.reading() as sql:  # the table is made with the others when the view store opens
            row = sql.one(f"SELECT version FROM {SCHEMA_TABLE}")
        return str(row["version"]) if row else None

    def record_version(self) -> None:
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(f"DELETE FROM {SCHEMA_TABLE}")
            cursor.execute(f"INSERT INTO {SCHEMA_TABLE} (version) VALUES ('{schema_version()}')")


class SQLiteMemoryView(ViewMixin, SQLiteTrackingRecorder):
    """The view tables in their own SQLite file (FTS5 for search)."""

    dialect = "sqlite"

    def construct_create_table_statements(self) -> list[str]:
        """The tracking table plus the view tables."""
        return [*super().construct_create_table_statements(), *create_statements("sqlite")]

    def _tracking_table(self) -> str:
        return "tracking"

    @contextlib.contextmanager
    def _writing(self) -> Iterator[Any]:
        # Applying reads view rows before it writes them. In a deferred transaction,
        # another process's commit in between makes the first write fail at once with
        # "database is locked" (a stale snapshot cannot be upgraded, so SQLite does not
        # wait): take the write lock first, waiting the time-out for it.
        with self.datastore.get_connection(commit=True) as connection, _ImmediateTransaction(connection, commit=True) as cursor, cursor:
            yield cursor


class _ImmediateTransaction(SQLiteTransaction):
    """The library's transaction (its commit, rollback and error types), begun with the write lock."""

    def __enter__(self) -> Any:
        cursor = self.connection.cursor()
        try:
            cursor.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:  # the lock not had in the time-out: the library's error, as its own BEGIN
            raise OperationalError(error) from error
        return cursor


def open_sqlite_view(
    path: str,
    count_tokens: Callable[[str], int] | None = None,
    embed_texts: Callable[[list[str]], list[str | None]] | None = None,
) -> SQLiteMemoryView:
    """Open (and create on first use) the SQLite view store (``count_tokens`` counts context lines, ``embed_texts`` embeds)."""
    view = SQLiteMemoryView(SQLiteDatastore(db_name=path, lock_timeout=30))
    view.count_tokens = count_tokens
    view.embed_texts = embed_texts
    view.create_table()
    return view


def catch_up(app: MnemologApp, view: MemoryView, batch_size: int = 200) -> int:
    """Apply every event the view has not seen; returns how many were applied.

    SQLite cannot be subscribed to, so views follow the log by polling the
    notification table from the tracked position. Two processes catching up at
    once is safe: the loser's batch fails on the tracking record and is re-read.
    On PostgreSQL the two transactions may also deadlock on view rows; the
    server rolls one back whole, and that one re-reads too.
    """
    applied = 0
    while True:
        start = view.position(app.name) + 1
        notifications = app.recorder.select_notifications(start=start, limit=batch_size)
        if not notifications:
            if applied >= ANALYZE_AFTER:
                view.refresh_statistics()
            return applied
        batch = [(app.mapper.to_domain_event(n), Tracking(app.name, n.id)) for n in notifications]
        try:
            view.apply(batch)
        except IntegrityError:
            continue  # another process applied (part of) this batch first
        except OperationalError as error:
            if getattr(error.__cause__, "sqlstate", None) not in _LOST_A_RACE:
                raise
            continue  # rolled back as a deadlock's victim: nothing of the batch was written
        applied += len(batch)


LOAD_PAGE = 2_000  # events a rebuild reads from the log at a time
# Events one catch-up applies before it refreshes the planner's statistics: until autovacuum gets to
# a table filled at once, PostgreSQL plans a word in most rows as if it were rare (20k items: 22 ms, not 1.4).
ANALYZE_AFTER = 5_000
LOAD_WINDOW = 10_000  # rows a rebuild holds before it writes them (what bounds its memory: ~2 KB a row)

# PostgreSQL's SQLSTATEs for a transaction rolled back because it raced another:
# deadlock_detected, serialization_failure.
_LOST_A_RACE = frozenset({"40P01", "40001"})


def rebuild(app: MnemologApp, view: MemoryView) -> int:
    """Drop every projection table and project the whole log once; returns the events replayed.

    SQLite loads its own tables (``load``: rows written in bulk, the search index
    filled in one pass). PostgreSQL loads a scratch SQLite view the same way, then
    copies every table with COPY and builds the indexes after loading, all in one
    transaction.
    """
    if view.dialect == "postgres":
        from mnemolog.projections.postgres_view import PostgresMemoryView, rebuild_by_copy

        assert isinstance(view, PostgresMemoryView)
        count = rebuild_by_copy(app, view)
    else:
        count = view.load(app)
    view.record_version()
    return count


def open_views(app: MnemologApp, view: MemoryView) -> MemoryView:
    """``view``, rebuilt from the log first when it was built under another schema version.

    The views are projections: when a new version changes their tables (a
    column added), replaying the log is the migration.
    """
    if view.built_version() != schema_version():
        view.replayed_on_open = (rebuild(app, view), view.position(app.name))
    return view
