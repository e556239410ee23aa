"""Full-text search over current memory items, scope-filtered, on both backends.

SQLite uses the FTS5 index over ``search_rows`` (``MATCH`` ranked by
``bm25``); PostgreSQL the generated ``document`` tsvector of ``search_rows``
with its GIN index (``websearch_to_tsquery`` ranked by ``ts_rank``). Ranking
bounds its work: both score only the newest ``RANKED`` matching rows, keep the
best ``limit`` in the reader's scope and join only those to the items (SQLite
scores in the index alone, looks only the best few up for the reader's scope,
and looks at more, then ranks more, when that scope held too few of them).
The user's query never reaches either parser as written: it is cut into words and rebuilt, so no query can be a syntax error.
All words must match; when no item has them all, items with any of them are
ranked instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemolog.domain.item_kinds import GLOBAL_SCOPE
from mnemolog.projections.schema import table
from mnemolog.projections.search_words import weightless
from mnemolog.projections.sql import Sql
from mnemolog.projections.view_store import MemoryView

MAX_TERMS = 32
# Ranking bounds its work: only the newest RANKED matching rows are scored (bm25 / ts_rank), so a
# word found in most items costs the same as a rarer one. A query asking for more hits ranks more.
RANKED = 300
# Of the ranked matches, only the best CANDIDATES × limit (+10) are looked up for the reader's scope
# and kind; when too few of them are the reader's, every ranked match is looked up.
CANDIDATES = 2
_WORD = re.compile(r"\w+", re.UNICODE)

# bm25 weights per FTS5 column: title, text, keywords.
_BM25 = "bm25({t}, 3.0, 1.0, 2.0)"


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


def _sqlite(sql: Sql, terms: list[str], any_term: bool, project: str | None, kind: str | None, limit: int) -> list[dict[str, Any]]:
    conditions, params = ["1 = 1"], []
    if project is not None:
        conditions.append("r.scope IN (?, ?)")
        params += [project, GLOBAL_SCOPE]
    if kind is not None:
        conditions.append("r.kind = ?")
        params.append(kind)
    search, rows, items, usage = table("search"), table("search_rows"), table("items"), table("item_usage")
    # Then only the best ``candidates`` of the ranked matches are looked up in search_rows for the
    # reader's scope, the best ``limit`` of those kept and joined to the items. Ties go to the newer
    # row, at every level.
    tail = (
        f"JOIN {rows} r ON r.id = m.rid WHERE {' AND '.join(conditions)} ORDER BY m.score DESC, m.rid DESC LIMIT ?) c "
        f"JOIN {items} i ON i.id = c.item_id LEFT JOIN {usage} u ON u.item_id = i.id "
        "WHERE i.status = 'active' ORDER BY c.score DESC, c.rid DESC"
    )
    # Innermost: the newest ``ranked`` matches, scored (FTS5 alone: no join per match).
    statement = (
        f"SELECT {_COLUMNS}, c.score FROM ("
        f"SELECT r.item_id, m.rid, m.score FROM ("
        f"SELECT rid, score FROM ("
        f"SELECT rowid AS rid, -{_BM25.format(t=search)} AS score FROM {search} "
        f"WHERE {search} MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY score DESC, rid DESC LIMIT ?) m " + tail
    )
    # The same ranked from Python (a query with words bm25 gives no weight): the best candidates as JSON.
    given = (
        f"SELECT {_COLUMNS}, c.score FROM (SELECT r.item_id, m.rid, m.score FROM ("
        "SELECT value ->> 0 AS rid, value ->> 1 AS score FROM json_each(?)) m " + tail
    )
    expression = _fts_expression(terms, any_term)
    light = weightless(sql, terms)
    ranked = max(RANKED, limit)
    candidates = min(ranked, CANDIDATES * limit + 10)  # most of the best are in the reader's scope
    best: list[tuple[int, float]] = []
    while True:
        if light:
            if not best:  # ranked anew when more are ranked
                best = _ranked_apart(sql, expression, [t for t in terms if t not in light], ranked)
            chosen = json.dumps(best[:candidates])
            found: list[dict[str, Any]] = sql.rows(given, [chosen, *params, limit])
        else:
            found = sql.rows(statement, [expression, ranked, candidates, *params, limit])
        if len(found) >= limit or (project is None and kind is None):
            return found  # unfiltered, fewer than asked means fewer matches than candidates: nothing more to look at
        # Fewer than asked: were there more ranked matches than candidates, or more matches than ranked?
        matched = sql.one(f"SELECT COUNT(*) AS n FROM (SELECT rowid FROM {search} WHERE {search} MATCH ? LIMIT ?)", [expression, ranked + 1])
        n = 0 if matched is None else int(matched["n"])
        if n > candidates and candidates < ranked:
            candidates = ranked  # the reader's scope held few of the best: look at every ranked match
        elif n > ranked and (project is not None or kind is not None):
            ranked *= 8  # and fewer than asked among the ranked ones: rank more
            candidates = ranked
            best = []
        else:
            return found


def _ranked_apart(sql: Sql, expression: str, weighed: list[str], ranked: int) -> list[tuple[int, float]]:
    """The newest ``ranked`` matches of ``expression``, best first, scored by bm25 over the ``weighed`` terms alone.

    bm25 would give the other terms (in half of the rows or more) an IDF of 1e-6 after walking
    their whole doclists; here they only select. The newest matches come from the index in rowid
    order; the weighed terms' bm25 is read for the rows between the oldest and newest of them.
    """
    search = table("search")
    ids = [int(r["rid"]) for r in sql.rows(f"SELECT rowid AS rid FROM {search} WHERE {search} MATCH ? ORDER BY rowid DESC LIMIT ?", [expression, ranked])]
    scores: dict[int, float] = {}
    if ids and weighed:
        scored = sql.rows(
            f"SELECT rowid AS rid, -{_BM25.format(t=search)} AS score FROM {search} WHERE {search} MATCH ? AND rowid BETWEEN ? AND ?",
            [_fts_expression(weighed, True), ids[-1], ids[0]],
        )
        scores = {int(r["rid"]): float(r["score"]) for r in scored}
    return sorted(((rid, scores.get(rid, 0.0)) for rid in ids), key=lambda pair: (-pair[1], -pair[0]))


def _postgres(sql: Sql, terms: list[str], any_term: bool, project: str | None, kind: str | None, limit: int) -> list[dict[str, Any]]:
    conditions = ["s.document @@ q.query"]
    params: list[Any] = [_websearch_text(terms, any_term)]
    if project is not None:
        conditions.append("s.scope IN (?, ?)")
        params += [project, GLOBAL_SCOPE]
    if kind is not None:
        conditions.append("s.kind = ?")
        params.append(kind)
    rows, items, usage = table("search_rows"), table("items"), table("item_usage")
    statement = (
        f"SELECT {_COLUMNS}, c.score FROM ("
        f"SELECT m.item_id, m.id, ts_rank(m.document, m.query) AS score FROM ("
        f"SELECT s.id, s.item_id, s.document, q.query FROM {rows} s, websearch_to_tsquery('english', ?) AS q(query) "
        f"WHERE {' AND '.join(conditions)} ORDER BY s.id DESC LIMIT ?) m "
        "ORDER BY score DESC, m.id DESC LIMIT ?) c "
        f"JOIN {items} i ON i.id = c.item_id LEFT JOIN {usage} u ON u.item_id = i.id "
        "WHERE i.status = 'active' ORDER BY c.score DESC, c.id DESC"
    )
    # Planned for its words: the newest matches of a word in most rows come from a backward scan, of a rare one from GIN.
    found: list[dict[str, Any]] = sql.rows(statement, [*params, max(RANKED, limit), limit], planned_per_call=True)
    return found


def _run(sql: Sql, dialect: str, terms: list[str], any_term: bool, project: str | None, kind: str | None, limit: int) -> list[dict[str, Any]]:
    run = _sqlite if dialect == "sqlite" else _postgres
    return run(sql, terms, any_term, project, kind, max(limit, 1))


def search_rows(view: MemoryView, query: str, project: str | None, kind: str | None, limit: int, any_word: bool = True) -> list[dict[str, Any]]:
    """Item rows (with usage and a ``score``, higher is better) matching ``query`` in ``project`` (plus global).

    Without ``any_word`` only items holding every word are returned (no fallback to items with any of them).

    ``project`` None searches every scope (only for administrative use; reads
    for an agent always pass its project). Only active items are searched.
    """
    terms = query_terms(query)
    if not terms or limit <= 0:
        return []
    with view.reading() as sql:
        rows = _run(sql, view.dialect, terms, False, project, kind, limit)
        if not rows and len(terms) > 1 and any_word:
            rows = _run(sql, view.dialect, terms, True, project, kind, limit)
    return rows
