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
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from eventsourcing.persistence import IntegrityError, OperationalError, Tracking
from eventsourcing.sqlite import SQLiteDatastore, SQLiteTrackingRecorder
from mnemolog.domain.application import MnemologApp
from mnemolog.projections.schema import (
    SCHEMA_TABLE,
    create_statements,
    drop_statements,
    index_statements,
    schema_version,
)
from mnemolog.projections.sql import Sql


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

    def reset(self, application_name: str) -> None:
        """Drop every view table and the tracking record; recreate empty tables without indexes."""

    def build_indexes(self) -> None:
        """Create the secondary indexes."""

    def close(self) -> None:
        """Release the view store's connections."""

    def built_version(self) -> str | None:
        """The schema version the views were built with (None: before versions were recorded)."""

    def record_version(self) -> None:
        """Record that the views now follow this code's schema version."""


class ViewMixin:
    """The view operations shared by both backends (over the tracking recorder's datastore)."""

    dialect: str
    datastore: Any
    # Counts context lines as items are projected (bootstrap gives the o200k counter; None: not counted).
    count_tokens: Callable[[str], int] | None = None
    replayed_on_open: tuple[int, int] | None = None  # (events replayed, position) when open_views rebuilt

    def apply(self, batch: Sequence[tuple[Any, Tracking]]) -> None:
        if not batch:
            return
        # every event class: imported only when there are events to apply
        from mnemolog.projections.memory_view import apply_event

        with self.datastore.transaction(commit=True) as cursor:
            sql = Sql(cursor, self.dialect, self.count_tokens)
            for domain_event, _ in batch:
                apply_event(sql, domain_event)
            self._insert_tracking(cursor, batch[-1][1])  # type: ignore[attr-defined]

    @contextlib.contextmanager
    def reading(self) -> Iterator[Sql]:
        with self.datastore.transaction(commit=False) as cursor:
            yield Sql(cursor, self.dialect)

    def position(self, application_name: str) -> int:
        return self.max_tracking_id(application_name) or 0  # type: ignore[attr-defined]

    def _tracking_table(self) -> str:
        raise NotImplementedError

    def reset(self, application_name: str) -> None:
        with self.datastore.transaction(commit=True) as cursor:
            for statement in drop_statements():
                cursor.execute(statement)
            cursor.execute(
                f"DELETE FROM {self._tracking_table()} WHERE application_name = "
                + ("?" if self.dialect == "sqlite" else "%s"),
                (application_name,),
            )
            for statement in create_statements(self.dialect, with_indexes=False):
                cursor.execute(statement)

    def build_indexes(self) -> None:
        with self.datastore.transaction(commit=True) as cursor:
            for statement in index_statements(self.dialect):
                cursor.execute(statement)

    def close(self) -> None:
        self.datastore.close()

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


def open_sqlite_view(path: str, count_tokens: Callable[[str], int] | None = None) -> SQLiteMemoryView:
    """Open (and create on first use) the SQLite view store (``count_tokens`` counts context lines)."""
    view = SQLiteMemoryView(SQLiteDatastore(db_name=path, lock_timeout=30))
    view.count_tokens = count_tokens
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


# PostgreSQL's SQLSTATEs for a transaction rolled back because it raced another:
# deadlock_detected, serialization_failure.
_LOST_A_RACE = frozenset({"40P01", "40001"})


def rebuild(app: MnemologApp, view: MemoryView, batch_size: int = 1000) -> int:
    """Drop every projection table and replay the whole log; returns the events replayed.

    SQLite replays in batches straight into its tables. PostgreSQL replays into
    a scratch SQLite view (the same ``apply_event``), then loads every table
    with COPY and builds the indexes after loading, all in one transaction.
    """
    if view.dialect == "postgres":
        from mnemolog.projections.postgres_view import PostgresMemoryView, rebuild_by_copy

        assert isinstance(view, PostgresMemoryView)
        count = rebuild_by_copy(app, view, batch_size)
    else:
        view.reset(app.name)
        count = catch_up(app, view, batch_size=batch_size)
        view.build_indexes()
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
