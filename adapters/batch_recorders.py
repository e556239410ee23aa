"""Event recorders that write many events per statement, on eventsourcing's persistence interfaces.

The library's SQLite application recorder executes one INSERT per event (to
read each ``lastrowid``); its PostgreSQL recorder builds a composite-type value
per event in Python before one ``unnest``. These subclasses keep everything
else (tables, locking, notification ids, subscriptions) and change only how a
batch is written:

- SQLite: multi-row ``INSERT ... VALUES (...), (...)`` statements. Inside the
  write transaction rowids are allocated one after another, so the ids of a
  statement are the ``lastrowid - n + 1 .. lastrowid``.
- PostgreSQL: one ``INSERT ... SELECT FROM unnest(ids, versions, topics,
  states)`` over four plain arrays, which psycopg adapts without a Python
  object per event.

bootstrap selects them through the library's ``APPLICATION_RECORDER_TOPIC``; the PostgreSQL one
lives in ``batch_postgres_recorder`` (psycopg is imported only for PostgreSQL stores).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder

ROWS_PER_STATEMENT = 500  # 4 parameters a row: well under SQLite's 32,766 host parameters


class BatchSQLiteApplicationRecorder(SQLiteApplicationRecorder):
    """SQLite: a batch of events in multi-row INSERT statements."""

    data_keys: Any = None  # the app's data keys: the keys sealed into these events are stored first

    def _insert_events(self, c: Any, stored_events: Sequence[StoredEvent], **_: Any) -> Sequence[int] | None:
        if self.data_keys is not None:
            self.data_keys.save_keys()  # their own file: committed before the events are
        cursor = c.sqlite_cursor  # the library's wrapper hides lastrowid
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
