"""How session events change the history excerpts (``mnemolog_view_excerpts``).

A session's excerpts are cut from its transcript when it is recorded,
updated or recorded again (an erase); a forget's scrub and a lift's restore
change the texts of the items they name, in every excerpt holding them. A
withdrawn session (deleted, pruned, disabled or polluted) has none, as its
other texts leave the views: what withdrawing forgets, history forgets too,
until new content records the session again. Each row keeps its parts (``domain.excerpts.Part``
as JSON), so a scrub re-cuts nothing but the parts it changes. An excerpt's
id is a hash of its session and number: the same on every build, so an
incremental catch-up and a rebuild write the same rows.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mnemolog.domain.excerpts import Excerpt, Part, excerpt_text, rescrubbed
from mnemolog.projections.view_rows import ViewRows


def excerpt_id(session_id: str, n: int) -> int:
    """The row id of excerpt ``n`` of a session (a positive 63-bit integer: the full-text index's rowid)."""
    digest = hashlib.blake2b(f"{session_id}:{n}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def _parts_json(parts: tuple[Part, ...]) -> str:
    return json.dumps([[p.index, p.role, p.text, p.line] for p in parts], ensure_ascii=False, separators=(",", ":"))


def _parts(row: dict[str, Any]) -> tuple[Part, ...]:
    return tuple(Part(index, role, text, line) for index, role, text, line in json.loads(row["parts"]))


def _row(session_id: str, scope: str, n: int, parts: tuple[Part, ...], vector: str | None = None) -> dict[str, Any]:
    lines = Excerpt(parts).lines
    return {
        "id": excerpt_id(session_id, n),
        "session_id": session_id,
        "n": n,
        "scope": scope,
        "first_line": lines[0],
        "last_line": lines[1],
        "text": excerpt_text(parts),
        "parts": _parts_json(parts),
        "vector": vector,
    }


def put_transcript(rows: ViewRows, session_id: str, scope: str, transcript: Any) -> None:
    """The session's excerpts become those cut from ``transcript`` (vectors of unchanged texts kept)."""
    from mnemolog.domain.excerpts import cut_excerpts

    kept = {r["text"]: r["vector"] for r in rows.excerpts_of(session_id)}
    new = []
    for n, excerpt in enumerate(cut_excerpts(transcript)):
        row = _row(session_id, scope, n, excerpt.parts)
        row["vector"] = kept.get(row["text"])
        new.append(row)
    rows.excerpts_put(session_id, new)


def change_texts(rows: ViewRows, session_id: str, changed: tuple[tuple[int, str], ...]) -> None:
    """A scrub or a restore: the items at these transcript indexes now read these texts."""
    if not changed:
        return
    texts = dict(changed)
    current = rows.excerpts_of(session_id)
    new, touched = [], False
    for row in current:
        parts = _parts(row)
        if not any(p.index in texts for p in parts):
            new.append(row)
            continue
        touched = True
        new.append(_row(session_id, row["scope"], row["n"], rescrubbed(parts, texts)))
    if touched:
        rows.excerpts_put(session_id, new)


def drop(rows: ViewRows, session_id: str) -> None:
    """The session has no excerpts any more."""
    rows.excerpts_put(session_id, [])
