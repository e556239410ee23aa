"""The PostgreSQL event recorder that writes a batch in one INSERT over four arrays (see batch_recorders)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from psycopg.sql import SQL, Identifier


class BatchPostgresApplicationRecorder(PostgresApplicationRecorder):
    """PostgreSQL: ``INSERT ... SELECT FROM unnest(ids, versions, topics, states)`` (no composite value per event)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.batch_insert_statement = SQL(
            "INSERT INTO {schema}.{table} (originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(%s::{id_type}[], %s::bigint[], %s::text[], %s::bytea[]) "
            "RETURNING notification_id"
        ).format(
            schema=Identifier(self.datastore.schema),
            table=Identifier(self.events_table_name),
            id_type=SQL(self.datastore.originator_id_type),
        )

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        self._lock_table(curs)
        self._notify_channel(curs)
        curs.execute(
            self.batch_insert_statement,
            (
                [e.originator_id for e in stored_events],
                [e.originator_version for e in stored_events],
                [e.topic for e in stored_events],
                [e.state for e in stored_events],
            ),
            prepare=True,
        )
