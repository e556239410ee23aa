"""How many search rows hold each word (SQLite): what tells search a word is too common to rank by.

bm25 gives a word found in half of the rows or more no weight (its IDF is at
most 0, and FTS5 makes it 1e-6), yet computing that IDF walks the word's whole
doclist. The views count, per word, the search rows that hold it (and, under
the empty word, the rows), so search knows without the walk.

The words counted are a lower bound of what FTS5 matches: a run of ASCII
letters and digits between ASCII separators, lower-cased, is a token of the
``unicode61`` tokenizer as it is, and the porter stemmer only makes more rows
match it; a run touching any other character is not counted. So a word counted
in half of the rows truly has no weight; a word that is not may still be common,
and is then ranked by bm25 as before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from mnemolog.projections.schema import table
from mnemolog.projections.sql import Sql

ROWS = ""  # the word under which the number of search rows is kept (no token is empty)
# A word held by fewer rows is ranked by bm25 as before (its doclist is walked in well under a millisecond).
WALKED = 10_000
_SEPARATORS = re.compile(r"[\x00-/:-@\[-`{-\x7f]+")  # every ASCII character but letters and digits
_ASCII_WORD = re.compile(r"[0-9a-z]+")
_CHUNK = 500  # item ids per lookup of the rows a flush replaces


def words(texts: Iterable[str]) -> set[str]:
    """The counted words of a search row's texts (title, text, keywords)."""
    joined = " ".join(texts)
    if joined.isascii():  # every run of letters and digits is between ASCII separators
        return set(_ASCII_WORD.findall(joined.lower()))
    return {run.lower() for run in _SEPARATORS.split(joined) if run and run.isascii()}


def count_changes(sql: Sql, replaced: Sequence[str], added: Iterable[Sequence[str]]) -> None:
    """Move the counts: the search rows of items ``replaced`` leave (read before they are deleted), rows with texts ``added`` come."""
    rows, counts = table("search_rows"), table("search_words")
    delta: Counter[str] = Counter()
    for start in range(0, len(replaced), _CHUNK):
        chunk = replaced[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        for old in sql.rows(f"SELECT title, text, keywords FROM {rows} WHERE item_id IN ({marks})", chunk):
            delta.subtract(words(str(old[c] or "") for c in ("title", "text", "keywords")))
            delta[ROWS] -= 1
    for texts in added:
        delta.update(words(texts))
        delta[ROWS] += 1
    changed = sorted((w, n) for w, n in delta.items() if n)
    if changed:
        sql.many(
            f"INSERT INTO {counts} (word, n) VALUES (?, ?) ON CONFLICT (word) DO UPDATE SET n = {counts}.n + excluded.n",
            changed,
        )
        # a word no row holds leaves no row, so a catch-up and a rebuild hold the same counts
        sql.many(f"DELETE FROM {counts} WHERE word = ? AND n = 0", [(w,) for w, n in changed if n < 0])


def weightless(sql: Sql, terms: Sequence[str]) -> set[str]:
    """The query terms counted in half of the search rows or more (bm25 gives them no weight), and in ``WALKED`` rows or more."""
    counted = [t for t in terms if t and t.isascii() and t.isalnum()]
    if not counted:
        return set()
    marks = ", ".join("?" * (len(counted) + 1))
    found: dict[str, Any] = {
        str(r["word"]): int(r["n"]) for r in sql.rows(f"SELECT word, n FROM {table('search_words')} WHERE word IN ({marks})", [ROWS, *counted])
    }
    total = found.get(ROWS, 0)
    return {t for t in counted if (n := found.get(t, 0)) >= WALKED and 2 * n >= total}
