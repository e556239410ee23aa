"""The words search counts per row are words FTS5 matches in that row: a count never exceeds FTS5's own."""

from __future__ import annotations

import random
import sqlite3

from mnemolog.projections.search_words import words

_PIECES = [
    "deploy", "Deploy", "DEPLOYS", "tests", "test_suite", "foo-bar", "x2", "v1.2.3", "café", "naïve", "Straße",
    "\u212a", "İstanbul", "日本語", "a\u0301b", "e\u0301", "don't", "#42", "(run)", "snake_case", "CamelCase", "",
    "mañana", "ǅemal", "ﬁle", "Ⅻ", "x\u200by", "tab\there", "new\nline", "quote\"d", "under_", "_lead",
]  # fmt: skip


def test_every_counted_word_is_matched_by_fts5_in_its_row() -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(title, text, keywords, tokenize='porter unicode61')")
    rng = random.Random(4)
    rows = []
    for n in range(400):
        texts = tuple(" ".join(rng.choice(_PIECES) + rng.choice(["", " ", "-", ".", "é", "_"]) for _ in range(rng.randint(0, 6))) for _ in range(3))
        db.execute("INSERT INTO t (rowid, title, text, keywords) VALUES (?, ?, ?, ?)", (n + 1, *texts))
        rows.append(texts)
    checked = 0
    for n, texts in enumerate(rows, start=1):
        for word in words(texts):
            found = db.execute("SELECT count(*) FROM t WHERE t MATCH ? AND rowid = ?", (f'"{word}"', n)).fetchone()[0]
            assert found == 1, (word, texts)
            checked += 1
    assert checked > 500
    assert words(("Deploy the café", "x2 foo-bar")) == {"deploy", "the", "x2", "foo", "bar"}  # "café" touches é: not counted
