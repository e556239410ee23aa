"""The PostgreSQL event recorder that writes a batch, and the data keys sealed into it, in one round trip.

A save is one statement, ``SELECT * FROM mnemolog_append_v1(...)``, run in
autocommit (a statement is its own transaction): a PL/pgSQL function that
does what the library's save does (``SET LOCAL lock_timeout``, the table
lock that keeps notification ids in commit order, ``NOTIFY`` for followers)
then inserts the batch's new data keys and the events from plain arrays
(``unnest``: no composite value per event, as the library's own function
takes) and returns their notification ids. One wait for a save, where a
raw one-row INSERT and commit makes two or three; the path before this made
three (``BEGIN`` + lock + ``NOTIFY``, the statement, ``COMMIT``), the
library's pipelined path five or six.

The function is made once per database (under an advisory lock, checked
first in ``pg_proc``), the first time a recorder saves; a change to it gets
a new name (``_v2``), so processes of two versions never run each other's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry
from mnemolog.adapters.data_keys import KEY_TABLE
from psycopg.sql import SQL, Composed, Identifier, Literal

FUNCTION = "mnemolog_append_v1"
FUNCTION_LOCK = 0x6D6E656D6F617070  # "mnemoapp": held while the function is made


class BatchPostgresApplicationRecorder(PostgresApplicationRecorder):
    """PostgreSQL: keys and events of a batch in one call of ``mnemolog_append_v1`` (one round trip)."""

    data_keys: Any = None  # the app's data keys (``PostgresKeys``): new keys go in the events' transaction

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._function_ready = False
        schema, id_type = Identifier(self.datastore.schema), SQL(self.datastore.originator_id_type)
        self.append_statement = SQL(
            "SELECT * FROM {schema}.{function}(%s::text[], %s::text[], %s::bytea[], %s::{id_type}[], %s::bigint[], %s::text[], %s::bytea[])"
        ).format(schema=schema, function=Identifier(FUNCTION), id_type=id_type)

    def _create_function(self) -> Composed:
        return SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}("
            "subjects text[], key_ids text[], keys bytea[], ids {id_type}[], versions bigint[], topics text[], states bytea[]) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $body$ "
            "BEGIN "
            "SET LOCAL lock_timeout = {lock_timeout}; "
            "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "IF cardinality(key_ids) > 0 THEN "
            "INSERT INTO {keys} (subject, key_id, key) SELECT * FROM unnest(subjects, key_ids, keys) ON CONFLICT (key_id) DO NOTHING; "
            "END IF; "
            "RETURN QUERY INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(ids, versions, topics, states) RETURNING notification_id; "
            "END $body$"
        ).format(
            schema=Identifier(self.datastore.schema),
            function=Identifier(FUNCTION),
            id_type=SQL(self.datastore.originator_id_type),
            lock_timeout=Literal(f"{self.datastore.lock_timeout}s"),
            table=Identifier(self.events_table_name),
            channel=Identifier(self.channel_name),
            keys=Identifier(KEY_TABLE),
        )

    def _ensure_function(self) -> None:
        """Make ``mnemolog_append_v1`` in this database unless it is there (one process at a time)."""
        with self.datastore.get_connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (FUNCTION_LOCK,))
            if self.data_keys is not None:
                self.data_keys.ensure_table()  # the function inserts into it (made under the lock: one process at a time)
            found = conn.execute(
                "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = %s AND n.nspname = %s",
                (FUNCTION, self.datastore.schema),
            ).fetchone()
            if not found:
                conn.execute(self._create_function())
        self._function_ready = True

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Store the batch, and the data keys sealed into it, in one transaction; their notification ids.

        A uniqueness or version conflict raises the library's IntegrityError
        (the datastore's connection translates it) and writes nothing.
        """
        if not stored_events:
            return []
        if not self._function_ready:
            self._ensure_function()
        keys = self.data_keys.unsaved_keys(e.originator_id for e in stored_events) if self.data_keys is not None else []
        params = (
            [k[0] for k in keys],
            [k[1] for k in keys],
            [k[2] for k in keys],
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        )
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self.append_statement, params, prepare=True)
            ids = [row[FUNCTION] for row in curs.fetchall()]
        if keys:
            self.data_keys.saved(keys)  # committed: only now are they no longer held
        return ids
