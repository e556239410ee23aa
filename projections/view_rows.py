"""The rows a batch of events changes, held in memory and written in bulk.

``memory_view`` says how each event changes rows; this module is where those
rows live while a batch is applied. A row is read from its table the first
time an event of the batch needs it (one SELECT by its key), changed in
memory by every later event, and written once when the batch is flushed: one
``executemany`` upsert per table, one delete and one insert for the search
rows and the evidence links. The incremental catch-up (a batch of a few
hundred events) and a rebuild (windows of many thousands) both go through
here, so they cannot disagree on what a row becomes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from operator import itemgetter
from typing import Any

from mnemolog.projections.schema import TABLES, table
from mnemolog.projections.search_words import count_changes
from mnemolog.projections.sql import Sql

# Link tables: rows only ever added (an item's citations, a run's edits), written with one insert per batch.
LINKS = ("item_citations", "run_edits")
# Tables written whole per item (the rules never read them back): the evidence links and the search rows;
# and the per-scope counts, which only the flush changes.
_PER_ITEM = ("item_evidence", "search_rows", "context_counts", "excerpts", "history_sessions", *LINKS)
UNLISTED_RANK = 3  # the context_rank of a rejected item: context lists only items ranked below it
_UNCOUNTED = {"context_tokens": None, "summary_tokens": None}  # the counts of an item no reader lists


def _listed_in(row: dict[str, Any] | None) -> str | None:
    """The scope whose context may list this item row (active, not rejected), else None."""
    if row is None or row["status"] != "active" or (row["context_rank"] if row["context_rank"] is not None else UNLISTED_RANK) >= UNLISTED_RANK:
        return None
    return str(row["scope"])


@cache
def columns(name: str) -> tuple[str, ...]:
    """The columns of a view table, in their order in ``schema.TABLES``."""
    return tuple(re.findall(r"(?:^|,)\s*(\w+)\s+(?:TEXT|INTEGER)", TABLES[name]))


def key_column(name: str) -> str:
    """The primary key of a view table whose rows are kept here (its first column)."""
    return columns(name)[0]


@cache
def _values(name: str) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A row's values in ``columns`` order, as one tuple (itemgetter: no Python loop per column)."""
    cols = columns(name)
    get = itemgetter(*cols)
    return get if len(cols) > 1 else lambda row: (get(row),)


@cache
def _upsert(name: str) -> str:
    cols = columns(name)
    key = key_column(name)
    sets = ", ".join(f"{c} = excluded.{c}" for c in cols if c != key)
    return (
        f"INSERT INTO {table(name)} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)}) "
        f"ON CONFLICT ({key}) DO UPDATE SET {sets}"
    )


def whole_text(excerpts: list[dict[str, Any]]) -> str:
    """A session's whole text as its excerpts hold it: each transcript item once, in order (no lead-ins)."""
    import json

    seen: dict[int, str] = {}
    for row in excerpts:
        for index, role, text, _line in json.loads(row["parts"]):
            if role != "before":
                seen.setdefault(index, text)
    return "\n".join(seen[i] for i in sorted(seen))


class ViewRows:
    """The working set of one batch: rows by table and key, the items' evidence and search rows.

    ``line_tokens`` (when the view has a counter) counts each changed active
    item's context and summary lines at the flush, from the item's final row.
    """

    def __init__(
        self,
        sql: Sql,
        line_tokens: Callable[[dict[str, Any]], dict[str, int]] | None = None,
        embed: Callable[[list[str]], list[str | None]] | None = None,
    ) -> None:
        self.sql = sql
        self._line_tokens = line_tokens
        self._embed = embed  # the views' embedding model: a vector (as stored) per text; None: none
        self._excerpts: dict[str, list[dict[str, Any]]] = {}  # session id -> its excerpt rows now
        self._rows: dict[str, dict[str, dict[str, Any] | None]] = {
            n: {} for n in TABLES if n not in _PER_ITEM
        }
        self._dirty: dict[str, dict[str, None]] = {n: {} for n in self._rows}  # ordered sets
        self._evidence: dict[str, list[str]] = {}
        self._search: dict[
            str, tuple[int, tuple[Any, ...]] | None
        ] = {}  # item id -> (id, row) or dropped
        self._search_id: int | None = None
        self._listed_before: dict[str, str | None] = {}  # item id -> the scope listing it before this batch
        self._new_items: set[str] = set()  # items added in this batch: no evidence or search row of theirs is stored yet
        self._links: dict[str, dict[tuple[Any, ...], None]] = {n: {} for n in LINKS}  # ordered sets of new rows

    def __len__(self) -> int:
        """How many rows are held (a rebuild flushes when this grows past its window)."""
        held = sum(len(r) for r in self._rows.values()) + len(self._evidence) + len(self._search) + len(self._excerpts)
        return held + sum(map(len, self._links.values()))

    def get(self, name: str, key: str) -> dict[str, Any] | None:
        """The row of ``name`` with this key as the batch has made it so far (None: no such row)."""
        held = self._rows[name]
        if key in held:
            return held[key]
        found = self.sql.one(f"SELECT * FROM {table(name)} WHERE {key_column(name)} = ?", [key])
        held[key] = found
        if name == "items":
            self._listed_before.setdefault(key, _listed_in(found))
        return found

    def insert(self, name: str, values: dict[str, Any]) -> None:
        """A new row (columns not given are NULL)."""
        row = dict.fromkeys(columns(name))
        row.update(values)
        key = str(row[key_column(name)])
        if name == "items":
            self._listed_before.setdefault(key, None)  # a new item (an Added event is an item's first)
            self._new_items.add(key)
        self._rows[name][key] = row
        self._dirty[name][key] = None

    def update(self, name: str, key: str, values: dict[str, Any]) -> None:
        """Change columns of an existing row (nothing when there is no such row, as SQL's UPDATE)."""
        row = self.get(name, key)
        if row is None:
            return
        row.update(values)
        self._dirty[name][key] = None

    def set_evidence(self, item_id: str, session_ids: list[str]) -> None:
        """The item's evidence links become these sessions."""
        self._evidence[item_id] = session_ids

    def link(self, name: str, values: tuple[Any, ...]) -> None:
        """A row of a link table (its columns in order); one already stored is kept as it is."""
        self._links[name][values] = None

    def search_put(self, item_id: str, values: tuple[Any, ...]) -> None:
        """The item's search row becomes ``values`` (scope, kind, title, text, keywords), as the newest row."""
        if self._search_id is None:
            found = self.sql.one(f"SELECT COALESCE(MAX(id), 0) AS top FROM {table('search_rows')}")
            self._search_id = int(found["top"]) if found else 0
        self._search_id += 1
        self._search[item_id] = (self._search_id, values)

    def search_drop(self, item_id: str) -> None:
        """The item has no search row any more."""
        self._search[item_id] = None

    def excerpts_of(self, session_id: str) -> list[dict[str, Any]]:
        """The session's excerpt rows as the batch has made them so far, in order."""
        if session_id in self._excerpts:
            return list(self._excerpts[session_id])
        return self.sql.rows(f"SELECT * FROM {table('excerpts')} WHERE session_id = ? ORDER BY n", [session_id])

    def excerpts_put(self, session_id: str, excerpts: list[dict[str, Any]]) -> None:
        """The session's excerpt rows become these (a row whose ``vector`` is None is embedded at the flush)."""
        self._excerpts[session_id] = excerpts

    def flush(self) -> None:
        """Write every changed row: one statement per table for many rows."""
        sql = self.sql
        items = self._rows["items"]
        if self._line_tokens is not None:
            for key in self._dirty["items"]:
                row = items[key]
                if row is not None:
                    row.update(self._line_tokens(row) if row["status"] == "active" else _UNCOUNTED)
        self._flush_counts()
        for name, dirty in self._dirty.items():
            if dirty:
                held = self._rows[name]
                values = _values(name)
                sql.many(_upsert(name), [values(row) for key in dirty if (row := held[key]) is not None])
        for name, links in self._links.items():
            if links:
                cols = columns(name)
                sql.many(
                    f"INSERT INTO {table(name)} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)}) ON CONFLICT DO NOTHING",
                    list(links),
                )
        evidence = table("item_evidence")
        new = self._new_items
        if self._evidence:
            sql.many(f"DELETE FROM {evidence} WHERE item_id = ?", [(i,) for i in self._evidence if i not in new])
            sql.many(
                f"INSERT INTO {evidence} (item_id, session_id) VALUES (?, ?)",
                [(i, s) for i, sessions in self._evidence.items() for s in sessions],
            )
        self._flush_excerpts()
        search = table("search_rows")
        if self._search:
            if sql.dialect == "sqlite":  # the words' row counts, before the replaced rows go
                count_changes(sql, list(self._search), [put[1][2:] for put in self._search.values() if put is not None])
            sql.many(
                f"DELETE FROM {search} WHERE item_id = ?", [(i,) for i in self._search if i not in new]
            )  # by its unique index
            put = sorted((put[0], i, *put[1]) for i, put in self._search.items() if put is not None)
            vectors = self._vectors([f"{title}\n{text}" for _, _, _, _, title, text, _ in put])
            sql.many(
                f"INSERT INTO {search} (id, item_id, scope, kind, title, text, keywords, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*row, vector) for row, vector in zip(put, vectors, strict=True)],
            )
        self.clear()

    def _vectors(self, texts: list[str]) -> list[str | None]:
        return self._embed(texts) if self._embed is not None and texts else [None] * len(texts)

    def _flush_excerpts(self) -> None:
        if not self._excerpts:
            return
        name = table("excerpts")
        cols = columns("excerpts")
        rows = [row for excerpts in self._excerpts.values() for row in excerpts]
        missing = [row for row in rows if row["vector"] is None]
        for row, vector in zip(missing, self._vectors([row["text"] for row in missing]), strict=True):
            row["vector"] = vector
        gone = [(sid,) for sid in self._excerpts]
        self.sql.many(f"DELETE FROM {name} WHERE session_id = ?", gone)
        get = _values("excerpts")
        self.sql.many(f"INSERT INTO {name} ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})", [get(r) for r in rows])
        chats = table("history_sessions")
        self.sql.many(f"DELETE FROM {chats} WHERE session_id = ?", gone)
        self.sql.many(
            f"INSERT INTO {chats} (id, session_id, scope, text) VALUES (?, ?, ?, ?)",
            [(excerpts[0]["id"] ^ 1, sid, excerpts[0]["scope"], whole_text(excerpts)) for sid, excerpts in self._excerpts.items() if excerpts],
        )

    def _flush_counts(self) -> None:
        """Move each changed item's count from the scope that listed it to the scope that lists it now."""
        delta: dict[str, int] = {}
        items = self._rows["items"]
        for key in self._dirty["items"]:
            before, now = self._listed_before.get(key), _listed_in(items[key])
            if before != now:
                if before is not None:
                    delta[before] = delta.get(before, 0) - 1
                if now is not None:
                    delta[now] = delta.get(now, 0) + 1
        counts = table("context_counts")
        changed = [(scope, n) for scope, n in sorted(delta.items()) if n]
        if changed:
            self.sql.many(
                f"INSERT INTO {counts} (scope, n) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET n = {counts}.n + excluded.n",
                changed,
            )
            # a scope back to none leaves no row, so a catch-up and a rebuild hold the same rows
            self.sql.many(f"DELETE FROM {counts} WHERE scope = ? AND n = 0", [(scope,) for scope, _ in changed])

    def clear(self) -> None:
        """Forget every held row (after a flush)."""
        for name in self._rows:
            self._rows[name].clear()
            self._dirty[name].clear()
        self._evidence.clear()
        self._search.clear()
        self._excerpts.clear()
        self._listed_before.clear()
        self._new_items.clear()
        for links in self._links.values():
            links.clear()
