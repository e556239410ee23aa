"""A thin cursor wrapper so the view code writes one SQL text for both backends."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


class Sql:
    """Runs statements written with ``?`` placeholders on a SQLite or psycopg cursor."""

    def __init__(self, cursor: Any, dialect: str) -> None:
        self.cursor = cursor
        self.dialect = dialect

    def _q(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.dialect == "postgres" else statement

    def run(self, statement: str, params: Sequence[Any] = ()) -> None:
        """Execute one statement."""
        self.cursor.execute(self._q(statement), tuple(params))

    def many(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        """Execute one statement for many parameter rows."""
        if rows:
            self.cursor.executemany(self._q(statement), [tuple(r) for r in rows])

    def rows(self, statement: str, params: Sequence[Any] = (), planned_per_call: bool = False) -> list[dict[str, Any]]:
        """Fetch all rows as dicts (``planned_per_call``: PostgreSQL plans the statement for these parameters each time)."""
        if planned_per_call and self.dialect == "postgres":
            # psycopg prepares a statement run five times; PostgreSQL may then keep one generic plan for every
            # parameter, which for a search is the plan of no word in particular.
            self.cursor.execute(self._q(statement), tuple(params), prepare=False)
        else:
            self.cursor.execute(self._q(statement), tuple(params))
        return [dict(r) for r in self.cursor.fetchall()]

    def each(self, statement: str, params: Sequence[Any] = (), batch: int = 1000) -> Iterator[dict[str, Any]]:
        """The rows as dicts, fetched ``batch`` at a time (never all of them held at once)."""
        self.cursor.execute(self._q(statement), tuple(params))
        cursor = getattr(self.cursor, "sqlite_cursor", self.cursor)  # the library's SQLite wrapper has no fetchmany
        while True:
            page = cursor.fetchmany(batch)
            if not page:
                return
            for r in page:
                yield dict(r)

    def one(self, statement: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        """Fetch the first row as a dict, or None."""
        found = self.rows(statement, params)
        return found[0] if found else None
