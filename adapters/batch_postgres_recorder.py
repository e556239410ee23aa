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

    data_keys: Any = None  # the app's data keys: the keys sealed into these events are stored with them

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Store the batch, and the data keys sealed into it in the same transaction."""
        keys = self.data_keys.unsaved_keys() if self.data_keys is not None else []
        ids = super().insert_events(stored_events, new_keys=keys, **kwargs)  # each retried attempt writes them
        if keys:
            self.data_keys.saved(keys)  # committed: only now are they no longer held
        return ids

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        if kwargs.get("new_keys"):
            self.data_keys.store_keys(kwargs["new_keys"], curs)  # keys and events commit together
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
