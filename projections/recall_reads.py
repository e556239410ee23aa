"""The recall view: chats by words, stored texts by meaning, and excerpts by reference.

An excerpt is readable by a reader of its session's scope only (never
user-wide: a session belongs to one project), and only while its session is
enabled and not deleted. Words rank whole chats (``history_sessions``: a
session's excerpts' text) by BM25 on SQLite (FTS5) and by ``ts_rank`` on
PostgreSQL (the generated ``document`` column and its GIN index); any word of
the query may match (a bug report is long, and the chat sharing most of its
rarer words is the one to find). Each chat is shown by its excerpt the words
rank best. Meaning is the nearest stored embeddings (``projections/vectors.py``),
the query embedded by the same model that embedded the texts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from mnemolog.domain.recall import ExcerptHit
from mnemolog.projections.schema import table
from mnemolog.projections.search import query_terms
from mnemolog.projections.sql import Sql
from mnemolog.projections.vectors import VectorIndex
from mnemolog.projections.view_store import MemoryView

# Embeds one query: its normalised vector, or None when no model is there (then ``why_not`` says why).
QueryEmbedder = Callable[[str], Any]

_SHOWN = (
    "e.id, e.session_id, e.n, e.scope, e.first_line, e.last_line, e.text, "
    "s.source, s.native_id, s.path, s.updated_at"
)
_LIVE = "s.mode = 'enabled' AND s.deleted = 0"
CANDIDATES = 4  # ranked chats looked up for the reader's scope, per hit asked for (plus 10)
STEM = 5  # the letters two words must share to count as one when an excerpt is picked
_WORD = re.compile(r"\w+", re.UNICODE)


def _hit(r: dict[str, Any]) -> ExcerptHit:
    updated = r.get("updated_at")
    return ExcerptHit(
        excerpt_id=int(r["id"]),
        session_id=UUID(r["session_id"]),
        n=int(r["n"]),
        agent=r["source"] or "",
        native_id=r["native_id"] or "",
        path=r["path"] or "",
        first_line=r["first_line"],
        last_line=r["last_line"],
        date=datetime.fromisoformat(updated) if updated else None,
        text=r["text"] or "",
        scope=r["scope"] or "",
    )


def _sqlite_sessions(sql: Sql, terms: list[str], project: str, limit: int) -> list[str]:
    """The best chats of ``project`` for the words: FTS5 ranks the matches in the index alone, the best few are looked up.

    Only ``CANDIDATES`` × ``limit`` of the ranked matches are joined to their sessions (most are the reader's);
    when too few of them are, every match is.
    """
    search = table("session_search")
    expression = " OR ".join(f'"{t}"' for t in terms)
    statement = (
        f"SELECT h.session_id FROM (SELECT rowid AS rid, rank AS score FROM {search} WHERE {search} MATCH ? ORDER BY rank LIMIT ?) m "
        f"JOIN {table('history_sessions')} h ON h.id = m.rid JOIN {table('sessions')} s ON s.id = h.session_id "
        f"WHERE h.scope = ? AND {_LIVE} ORDER BY m.score, h.id LIMIT ?"
    )
    ranked = CANDIDATES * limit + 10
    rows = sql.rows(statement, [expression, ranked, project, limit])
    if len(rows) < limit:
        rows = sql.rows(statement, [expression, -1, project, limit])  # the reader's scope held few of the best: rank them all
    return [r["session_id"] for r in rows]


def _postgres_sessions(sql: Sql, terms: list[str], project: str, limit: int) -> list[str]:
    rows = sql.rows(
        f"SELECT h.session_id, ts_rank(h.document, q.query) AS score "
        f"FROM {table('history_sessions')} h JOIN {table('sessions')} s ON s.id = h.session_id, "
        "websearch_to_tsquery('english', ?) AS q(query) "
        f"WHERE h.document @@ q.query AND h.scope = ? AND {_LIVE} ORDER BY score DESC, h.id LIMIT ?",
        [" or ".join(terms), project, limit],
        planned_per_call=True,
    )
    return [r["session_id"] for r in rows]


def _best_in(sql: Sql, terms: list[str], sessions: list[str]) -> dict[str, dict[str, Any]]:
    """Of each of these sessions, the excerpt holding most of the words (the earlier one at a tie).

    A session has a few excerpts: they are read by the session index and counted here, rather than
    ranked by the full-text index over every excerpt holding a word.
    """
    marks = ", ".join("?" for _ in sessions)
    rows = sql.rows(
        f"SELECT {_SHOWN} FROM {table('excerpts')} e JOIN {table('sessions')} s ON s.id = e.session_id "
        f"WHERE e.session_id IN ({marks}) ORDER BY e.session_id, e.n",
        sessions,
    )
    stems = [t[:STEM] for t in terms]
    best: dict[str, tuple[int, dict[str, Any]]] = {}
    for r in rows:
        words = {w[:STEM] for w in _WORD.findall((r["text"] or "").casefold())}
        held = sum(1 for stem in stems if stem in words)
        if r["session_id"] not in best or held > best[r["session_id"]][0]:
            best[r["session_id"]] = (held, r)
    return {session: row for session, (_, row) in best.items()}


class ViewRecall:
    """``domain.recall.RecallReads`` over the views: excerpts by words and reference, texts by meaning."""

    def __init__(
        self,
        view: MemoryView,
        embed_query: QueryEmbedder | None,
        why_not: str,
        position: Callable[[], int],
        index: VectorIndex,
        meaning_weight: float = 1.0,
    ) -> None:
        self.view = view
        self.meaning_weight = meaning_weight
        self._embed_query = embed_query
        self._why_not = why_not
        self._position = position
        self._index = index

    @property
    def semantic(self) -> str:
        """"" when search ranks by meaning too, else the reason it does not."""
        return "" if self._embed_query is not None else self._why_not

    def chat_matches(self, query: str, project: str, limit: int) -> list[ExcerptHit]:
        """``project``'s sessions ranked by the words of ``query`` over their whole text, each as its best excerpt."""
        terms = query_terms(query)
        if not terms or limit <= 0:
            return []
        run = _sqlite_sessions if self.view.dialect == "sqlite" else _postgres_sessions
        with self.view.reading() as sql:
            sessions = run(sql, terms, project, limit)
            best = _best_in(sql, terms, sessions) if sessions else {}
        return [_hit(best[s]) for s in sessions if s in best]

    def nearest(self, query: str, project: str, limit: int, *, items: bool, excerpts: bool) -> list[tuple[str, str, float]]:
        """The stored texts of ``project`` (and user-wide items) nearest ``query`` by meaning."""
        if self._embed_query is None or not query.strip():
            return []
        vector = self._embed_query(query)
        if vector is None:
            return []
        position = self._position()  # before a connection is held: reading the position takes one of its own
        with self.view.reading() as sql:
            found = self._index.nearest(sql, project, position, vector, limit, items=items, excerpts=excerpts)
        return [(n.kind, n.ref, n.similarity) for n in found]

    def excerpts(self, ids: Sequence[int], project: str) -> dict[int, ExcerptHit]:
        """These excerpts, when ``project``'s and their session is live."""
        if not ids:
            return {}
        marks = ", ".join("?" for _ in ids)
        with self.view.reading() as sql:
            rows = sql.rows(
                f"SELECT {_SHOWN} FROM {table('excerpts')} e JOIN {table('sessions')} s ON s.id = e.session_id "
                f"WHERE e.id IN ({marks}) AND e.scope = ? AND {_LIVE}",
                [*ids, project],
            )
        return {int(r["id"]): _hit(r) for r in rows}

    def session_excerpts(self, native_id: str, project: str, first: int, last: int) -> list[ExcerptHit]:
        """Excerpts ``first``..``last`` of the session the agent calls ``native_id``, when ``project``'s."""
        with self.view.reading() as sql:
            rows = sql.rows(
                f"SELECT {_SHOWN} FROM {table('excerpts')} e JOIN {table('sessions')} s ON s.id = e.session_id "
                f"WHERE s.native_id = ? AND e.scope = ? AND e.n BETWEEN ? AND ? AND {_LIVE} ORDER BY e.n",
                [native_id, project, first, last],
            )
        return [_hit(r) for r in rows]
