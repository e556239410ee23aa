"""Event recorders that write many events per statement, on eventsourcing's persistence interfaces.

The library's SQLite application recorder executes one INSERT per event (to
read each ``lastrowid``); its PostgreSQL recorder builds a composite-type value
per event in Python before one ``unnest``. These subclasses keep everything
else (tables, locking, notification ids, subscriptions) and change only how a
batch is written:

- SQLite: multi-row ``INSERT ... VALUES (...), (...)`` statements. Inside the
  write transaction rowids are allocated one after another, so the ids of a
  statement are the ``lastrowid - n + 1 .. lastrowid``. The new data keys
  sealed into the batch go into the key table of the same file first, in the
  same transaction: a command is one durable commit.
- PostgreSQL: one ``INSERT ... SELECT FROM unnest(ids, versions, topics,
  states)`` over four plain arrays, which psycopg adapts without a Python
  object per event.

``adapters.store`` selects them through the library's ``APPLICATION_RECORDER_TOPIC``; the PostgreSQL one
lives in ``batch_postgres_recorder`` (psycopg is imported only for PostgreSQL stores).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder
from mnemolog.adapters.data_keys import SqliteKeys

ROWS_PER_STATEMENT = 500  # 4 parameters a row: well under SQLite's 32,766 host parameters


class BatchSQLiteApplicationRecorder(SQLiteApplicationRecorder):
    """SQLite: a batch of events in multi-row INSERT statements, with the data keys sealed into them."""

    data_keys: Any = None  # the app's data keys (``SqliteKeys`` on this file): new keys go in the events' transaction

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Store the batch and the new data keys sealed into it in one transaction (one commit); their notification ids."""
        keys = self._new_keys(stored_events)
        with self.datastore.transaction(commit=True) as c:
            ids = self._insert_events(c, stored_events, keys=keys, **kwargs)
        if keys:
            self.data_keys.saved(keys)  # committed: only now are they no longer held
        return ids

    def _new_keys(self, stored_events: Sequence[StoredEvent]) -> list[Any]:
        if not isinstance(self.data_keys, SqliteKeys):
            return []  # keys kept in memory (MemoryKeys) are never written
        return list(self.data_keys.unsaved_keys(cast(UUID, s.originator_id) for s in stored_events))  # mnemolog's ids are UUIDs

    def _insert_events(self, c: Any, stored_events: Sequence[StoredEvent], keys: list[Any] | None = None, **_: Any) -> Sequence[int] | None:
        cursor = c.sqlite_cursor  # the library's wrapper hides lastrowid
        if keys is None:
            keys = self._new_keys(stored_events)  # held until a later save's commit
        if keys:
            cursor.execute("PRAGMA secure_delete = ON")  # key pages this connection frees or moves leave no copy
            self.data_keys.write(cursor, keys)
        ids: list[int] = []
        for start in range(0, len(stored_events), ROWS_PER_STATEMENT):
            chunk = stored_events[start : start + ROWS_PER_STATEMENT]
            params: list[Any] = []
            for s in chunk:
                oid = s.originator_id.hex if isinstance(s.originator_id, UUID) else s.originator_id
                params += (oid, s.originator_version, s.topic, s.state)
            values = ", ".join(["(?,?,?,?)"] * len(chunk))
            cursor.execute(f"INSERT INTO {self.events_table_name} VALUES {values}", params)
            last = int(cursor.lastrowid or 0)
            ids.extend(range(last - len(chunk) + 1, last + 1))
        return ids
