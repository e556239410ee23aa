"""Full-text search over current memory items, scope-filtered, on both backends.

SQLite uses the FTS5 table (``MATCH`` ranked by ``bm25``); PostgreSQL the
generated ``document`` tsvector with its GIN index (``websearch_to_tsquery``
ranked by ``ts_rank``). The user's query never reaches either parser as
written: it is cut into words and rebuilt, so no query can be a syntax error.
All words must match; when no item has them all, items with any of them are
ranked instead.
"""

from __future__ import annotations

import re
from typing import Any

from mnemolog.projections.schema import table
from mnemolog.projections.sql import Sql
from mnemolog.projections.view_store import MemoryView

MAX_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)

# bm25 weights per FTS5 column: item_id, scope, kind (unindexed), title, text, keywords.
_BM25 = "bm25({t}, 0.0, 0.0, 0.0, 3.0, 1.0, 2.0)"


# Words a question is made of that say nothing about what is asked ("how do I run the tests").
_STOPWORDS = frozenset(
    ["a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "from", "as", "is", "are", "was", "were", "be", "it", "this", "that", "these", "those", "how", "what", "which", "where", "when", "why", "who", "do", "does", "did", "i", "we", "you", "my", "our", "me", "us", "can", "could", "should", "would", "there", "here", "about", "into"]
)


def query_terms(query: str) -> list[str]:
    """The words of a user's query (lower-cased, de-duplicated, at most ``MAX_TERMS``).

    Function words ("the", "how", "do") are left out when the query has any other word.
    """
    words = list(dict.fromkeys(w.casefold() for w in _WORD.findall(query)))
    meaningful = [w for w in words if w not in _STOPWORDS]
    return (meaningful or words)[:MAX_TERMS]


def _fts_expression(terms: list[str], any_term: bool) -> str:
    quoted = [f'"{t}"' for t in terms]  # \w+ words hold no quote, so each is one safe phrase
    return (" OR " if any_term else " ").join(quoted)


def _websearch_text(terms: list[str], any_term: bool) -> str:
    return (" or " if any_term else " ").join(terms)


_COLUMNS = "i.*, u.use_count, u.last_used"


def _run(sql: Sql, dialect: str, terms: list[str], any_term: bool, project: str | None, kind: str | None, limit: int) -> list[dict[str, Any]]:
    conditions = ["i.status = 'active'"]
    params: list[Any] = []
    if project is not None:
        conditions.append("s.scope IN (?, 'global')")
        params.append(project)
    if kind is not None:
        conditions.append("s.kind = ?")
        params.append(kind)
    where = " AND ".join(conditions)
    search, items, usage = table("search"), table("items"), table("item_usage")
    if dialect == "sqlite":
        statement = (
            f"SELECT {_COLUMNS}, -{_BM25.format(t=search)} AS score FROM {search} s "
            f"JOIN {items} i ON i.id = s.item_id LEFT JOIN {usage} u ON u.item_id = i.id "
            f"WHERE {search} MATCH ? AND {where} ORDER BY score DESC, i.id LIMIT ?"
        )
        found: list[dict[str, Any]] = sql.rows(statement, [_fts_expression(terms, any_term), *params, limit])
        return found
    statement = (
        f"SELECT {_COLUMNS}, ts_rank(s.document, q.query) AS score "
        f"FROM {search} s CROSS JOIN websearch_to_tsquery('english', ?) AS q(query) "
        f"JOIN {items} i ON i.id = s.item_id LEFT JOIN {usage} u ON u.item_id = i.id "
        f"WHERE s.document @@ q.query AND {where} ORDER BY score DESC, i.id LIMIT ?"
    )
    rows: list[dict[str, Any]] = sql.rows(statement, [_websearch_text(terms, any_term), *params, limit])
    return rows


def search_rows(view: MemoryView, query: str, project: str | None, kind: str | None, limit: int) -> list[dict[str, Any]]:
    """Item rows (with usage and a ``score``, higher is better) matching ``query`` in ``project`` (plus global).

    ``project`` None searches every scope (only for administrative use; reads
    for an agent always pass its project). Only active items are searched.
    """
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    with view.reading() as sql:
        rows = _run(sql, view.dialect, terms, False, project, kind, limit)
        if not rows and len(terms) > 1:
            rows = _run(sql, view.dialect, terms, True, project, kind, limit)
    return rows
