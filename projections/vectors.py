"""Embedding vectors as the views store them, and the in-process index semantic search reads.

A vector is stored as text (the same column type on both backends, copied by
a rebuild like any other): its L2-normalised components quantised to int8
(x 127) and base64-encoded, ``dimensions`` bytes a vector. The index of a
reader's scope (the project's items and excerpts, and the user-wide items)
is built from those rows on the first semantic search and kept while the
views stand at the same position. Up to ``EXACT`` vectors it is one float32
matrix searched by one matrix product (exact nearest neighbours); past that,
the vectors are held as int8 with their sign bits beside them, the sign bits
pick ``RESCORED`` candidates by Hamming distance and the int8 rows rank them
by their product with the query: a quarter of the memory, a few milliseconds
at 300k vectors, and no approximate index to drift.
"""

from __future__ import annotations

import base64
import binascii
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mnemolog.domain.item_kinds import GLOBAL_SCOPE
from mnemolog.projections.schema import table
from mnemolog.projections.sql import Sql

SCALE = 127.0
EXACT = 50_000  # vectors of one reader's scope searched exactly (float32: 1 KB each at 256 dimensions)
RESCORED = 512  # candidates the sign bits pick for the int8 rows to rank, past EXACT


def encode(vectors: Any) -> list[str | None]:
    """Each row of ``vectors`` (float, L2-normalised) as stored text."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or not len(matrix):
        return []
    quantised = np.clip(np.rint(matrix * SCALE), -127, 127).astype(np.int8)
    return [base64.b64encode(row.tobytes()).decode("ascii") for row in quantised]


def decode_int8(stored: Sequence[str], dimensions: int | None = None) -> Any:
    """Stored vectors as one int8 matrix, as stored (rows of another length than the first are zeros)."""
    if not stored:
        return np.zeros((0, dimensions or 0), dtype=np.int8)
    raw = [binascii.a2b_base64(text) for text in stored]
    width = dimensions or len(raw[0])
    joined = b"".join(row if len(row) == width else bytes(width) for row in raw)
    return np.frombuffer(joined, dtype=np.int8).reshape(len(raw), width)



@dataclass(frozen=True)
class Neighbour:
    """One stored text near a query: an item (by id) or an excerpt (by row id), with its cosine similarity."""

    kind: str  # "item" | "excerpt"
    ref: str
    similarity: float


@dataclass
class _Matrix:
    position: int
    kinds: list[str]
    refs: list[str]
    matrix: Any  # float32 rows (up to EXACT), else int8 rows
    signs: Any = None  # past EXACT: each row's sign bits, packed

    @property
    def width(self) -> int:
        return int(self.matrix.shape[1])

    def scores(self, vector: Any, limit: int) -> tuple[Any, Any]:
        """The indexes of the best ``limit`` rows for ``vector`` and their cosine similarities."""
        if self.signs is None:
            scores = self.matrix @ vector
            rows = np.arange(len(scores))
        else:
            distance = np.bitwise_count(np.bitwise_xor(self.signs, np.packbits(vector > 0))).sum(axis=1, dtype=np.uint16)
            picked = min(max(RESCORED, 4 * limit), len(distance))
            rows = np.argpartition(distance, picked - 1)[:picked]
            scores = (self.matrix[rows].astype(np.float32) @ vector) / SCALE
        count = min(limit, len(scores))
        best = np.argpartition(-scores, count - 1)[:count]
        best = best[np.argsort(-scores[best], kind="stable")]
        return rows[best], scores[best]


_ITEMS = (
    "SELECT r.item_id AS ref, r.vector FROM {rows} r JOIN {items} i ON i.id = r.item_id "
    "WHERE r.scope IN (?, ?) AND i.status = 'active' AND r.vector IS NOT NULL"
)
_EXCERPTS = (
    "SELECT e.id AS ref, e.vector FROM {excerpts} e JOIN {sessions} s ON s.id = e.session_id "
    "WHERE e.scope = ? AND s.mode = 'enabled' AND s.deleted = 0 AND e.vector IS NOT NULL"
)


class VectorIndex:
    """The stored vectors of each reader's scope, as matrices kept in memory while the views do not move."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, bool, bool], _Matrix] = {}
        self._lock = threading.Lock()

    def _matrix(self, sql: Sql, project: str, position: int, items: bool, excerpts: bool) -> _Matrix:
        key = (project, items, excerpts)
        with self._lock:
            held = self._held.get(key)
            if held is not None and held.position == position:
                return held
        kinds: list[str] = []
        rows: list[dict[str, Any]] = []
        if items:
            found = sql.rows(_ITEMS.format(rows=table("search_rows"), items=table("items")), [project, GLOBAL_SCOPE])
            rows += found
            kinds += ["item"] * len(found)
        if excerpts:
            found = sql.rows(_EXCERPTS.format(excerpts=table("excerpts"), sessions=table("sessions")), [project])
            rows += found
            kinds += ["excerpt"] * len(found)
        stored = decode_int8([r["vector"] for r in rows])
        if len(rows) <= EXACT:
            made = _Matrix(position, kinds, [str(r["ref"]) for r in rows], stored.astype(np.float32) / SCALE)
        else:
            made = _Matrix(position, kinds, [str(r["ref"]) for r in rows], stored, np.packbits(stored > 0, axis=1))
        with self._lock:
            self._held[key] = made
        return made

    def nearest(
        self, sql: Sql, project: str, position: int, query: Any, limit: int, *, items: bool = True, excerpts: bool = True
    ) -> list[Neighbour]:
        """The ``limit`` stored texts of ``project`` (and user-wide items) most similar to ``query`` (a normalised vector)."""
        held = self._matrix(sql, project, position, items, excerpts)
        if not held.refs or limit <= 0:
            return []
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if vector.shape[0] != held.width:
            return []  # stored by another model: a rebuild re-embeds them
        rows, scores = held.scores(vector, limit)
        return [Neighbour(held.kinds[i], held.refs[i], float(score)) for i, score in zip(rows, scores, strict=True)]
