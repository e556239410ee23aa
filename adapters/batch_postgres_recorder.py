"""The PostgreSQL event recorder that writes a batch in one INSERT over four arrays (see batch_recorders).

A save is three round trips, as few as a raw one-row INSERT and commit:
``BEGIN`` with the library's table lock and ``NOTIFY`` (one simple query),
then one statement that inserts the batch's new data keys (a data-modifying
``WITH``) and the events, returning their notification ids, then ``COMMIT``.
The library's own path pipelines the same statements but syncs the pipeline
at each nested block (five or six round trips for one event).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry
from psycopg.sql import SQL, Composed, Identifier


class BatchPostgresApplicationRecorder(PostgresApplicationRecorder):
    """PostgreSQL: ``INSERT ... SELECT FROM unnest(ids, versions, topics, states)`` (no composite value per event)."""

    data_keys: Any = None  # the app's data keys: the keys sealed into these events are stored with them

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        events = SQL(
            "INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(%s::{id_type}[], %s::bigint[], %s::text[], %s::bytea[]) "
            "RETURNING notification_id"
        ).format(
            schema=Identifier(self.datastore.schema),
            table=Identifier(self.events_table_name),
            id_type=SQL(self.datastore.originator_id_type),
        )
        self.batch_insert_statement = events
        self.keys_and_batch_statement: Composed | None = None
        self.begin_statement = Composed(
            [SQL("BEGIN; "), *[Composed([s, SQL("; ")]) for s in self.lock_table_statements], SQL("NOTIFY {0}").format(Identifier(self.channel_name))]
        )

    def _with_keys(self) -> Composed:
        if self.keys_and_batch_statement is None:
            self.keys_and_batch_statement = Composed([SQL("WITH new_keys AS ({0}) ").format(SQL(self.data_keys.insert_statement())), self.batch_insert_statement])
        return self.keys_and_batch_statement

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Store the batch, and the data keys sealed into it, in one transaction; their notification ids.

        A uniqueness or version conflict raises the library's IntegrityError
        (the datastore's connection translates it) and writes nothing.
        """
        if not stored_events:
            return []
        keys = self.data_keys.unsaved_keys() if self.data_keys is not None else []
        events = (
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        )
        statement: Composed = self.batch_insert_statement
        params: tuple[list[Any], ...] = events
        if keys:
            self.data_keys.ensure_table()
            statement, params = self._with_keys(), ([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys], *events)
        with self.datastore.get_connection() as conn:
            try:
                conn.execute(self.begin_statement)  # one round trip: no parameters, several statements
                with conn.cursor() as curs:
                    curs.execute(statement, params, prepare=True)
                    ids = [row["notification_id"] for row in curs.fetchall()]
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    conn.execute("ROLLBACK")
                raise
        if keys:
            self.data_keys.saved(keys)  # committed: only now are they no longer held
        return ids
