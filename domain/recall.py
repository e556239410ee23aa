"""Recall: one ranking over memory items and history excerpts, by words and by meaning.

Search draws candidates from up to four lists: items by words (full text),
chats by words (each session's whole text, shown as its best excerpt), and
items and excerpts by meaning (nearest embeddings).
They are fused by reciprocal rank (``1 / (K + rank)`` summed over the lists a
candidate is in), so no list's raw scores need to be comparable with
another's. Then:

- an item goes before an excerpt of equal relevance (what consolidation
  kept is the better-worded form), and trust and use break ties among items;
- a newer session's excerpt gains a little over an older one's (``RECENCY``);
- a later chat on the same subject as an earlier one that ranks above it
  goes right above it (``supersede``): when a later chat changed a
  decision, both match the question, and the later one is in force;
- a session gives at most one excerpt (its best), so one long chat cannot
  fill the page;
- a candidate found only by meaning must clear ``FLOOR`` (a question about
  nothing remembered returns nothing, not the least unrelated text).

Everything here is pure: the reads give the lists, this module orders them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol
from uuid import UUID

from mnemolog.domain.reads import ItemRow

K = 60  # the reciprocal-rank constant (Cormack et al.'s)
RECENCY = 0.0  # how much more the newest session's excerpt counts than the oldest one's
FLOOR = 0.35  # the least cosine similarity a candidate found only by meaning must have
ITEM_BONUS = 1e-9  # items first at equal relevance
TRUST_ORDER = {"accepted": 0, "proposed": 1, "doubted": 2, "rejected": 3}

Only = Literal["items", "history"]


@dataclass(frozen=True)
class ExcerptHit:
    """A history excerpt as search returns it: where it is (agent, session, file, lines, date) and its text."""

    excerpt_id: int
    session_id: UUID
    n: int  # its number in the session (neighbours are n - 1 and n + 1)
    agent: str  # codex | claude-code
    native_id: str  # the agent's own session id
    path: str
    first_line: int | None
    last_line: int | None
    date: datetime | None  # when the session was last active
    text: str
    scope: str = ""

    def reference(self) -> str:
        """How a hit names it for ``show`` and ``read_memory_item``: ``history:<native id>:<n>``."""
        return f"history:{self.native_id}:{self.n}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "id": self.reference(),
            "ref": self.reference(),
            "agent": self.agent,
            "session": self.native_id,
            "date": self.date.isoformat() if self.date else None,
            "path": self.path,
            "lines": [self.first_line, self.last_line],
            "text": self.text,
        }


@dataclass(frozen=True)
class RecallHit:
    """One search hit: an item or an excerpt, with its fused relevance (higher is better)."""

    kind: Literal["item", "excerpt"]
    score: float
    item: ItemRow | None = None
    excerpt: ExcerptHit | None = None
    found_by: tuple[str, ...] = ()  # "words", "meaning"
    similarity: float = 0.0  # the cosine similarity to the query when found by meaning (0.0 otherwise)


@dataclass(frozen=True)
class Recall:
    """What a search found, and why it searched by words alone when it did."""

    hits: tuple[RecallHit, ...]
    lexical_only: str = ""  # the reason search did not use meaning ("" when it did)
    misses: Mapping[str, int] = field(default_factory=dict)


class RecallReads(Protocol):
    """The history excerpts and the embedding index (``projections/recall_reads.py``)."""

    meaning_weight: float  # how much a rank by meaning counts against one by words (the model's)

    @property
    def semantic(self) -> str:
        """"" when search can rank by meaning, else why not (no model installed, none chosen)."""
        ...

    def chat_matches(self, query: str, project: str, limit: int) -> list[ExcerptHit]:
        """``project``'s sessions ranked by the words of ``query`` over their whole text (BM25), each as its best excerpt."""
        ...

    def nearest(self, query: str, project: str, limit: int, *, items: bool, excerpts: bool) -> list[tuple[str, str, float]]:
        """The stored texts nearest ``query`` by meaning: (``item`` | ``excerpt``, id, cosine), best first."""
        ...

    def excerpts(self, ids: Sequence[int], project: str) -> dict[int, ExcerptHit]:
        """These excerpts, when they are ``project``'s (and their session is not withdrawn)."""
        ...

    def session_excerpts(self, native_id: str, project: str, first: int, last: int) -> list[ExcerptHit]:
        """Excerpts ``first``..``last`` of the session the agent calls ``native_id``, when it is ``project``'s."""
        ...


@dataclass
class RecallCandidate:
    kind: Literal["item", "excerpt"]
    ref: str
    score: float = 0.0
    found_by: set[str] = field(default_factory=set)
    similarity: float = 0.0
    best_rank: int = 0  # the best rank the lists that chose its shown excerpt gave it


def fuse(
    item_words: Sequence[str],
    excerpt_words: Sequence[str],
    meaning: Sequence[tuple[str, str, float]],
    *,
    item_weight: float = 1.0,
    meaning_weight: float = 1.0,
    session_of: Mapping[str, str] | None = None,
) -> list[RecallCandidate]:
    """The candidates of the lists by fused reciprocal rank, before recency.

    ``excerpt_words`` are excerpts standing for their whole session (the best one of each chat the words rank);
    ``item_weight`` scales what ``item_words`` add (less when they matched only some words), ``meaning_weight``
    what ``meaning`` adds (the embedding model's strength against the words). Excerpts of one
    session (``session_of``: excerpt ref -> session) are one candidate, shown by the excerpt a list ranked
    best, so that words finding a chat and meaning finding one of its turns add up; each list counts a
    session once, at its best rank. The excerpt shown is the one the words ranked best (they hold what was
    asked), else the one nearest by meaning.
    """
    sessions = session_of or {}
    found: dict[tuple[str, str], RecallCandidate] = {}

    def add(kind: Literal["item", "excerpt"], ref: str, rank: int, how: str, similarity: float = 0.0, weight: float = 1.0) -> None:
        key = (kind, sessions.get(ref, ref) if kind == "excerpt" else ref)
        candidate = found.get(key)
        if candidate is None:
            candidate = found[key] = RecallCandidate(kind, ref, best_rank=rank)
        elif how == "words" and (("meaning" in candidate.found_by and "words" not in candidate.found_by) or rank < candidate.best_rank):
            candidate.ref, candidate.best_rank = ref, rank  # the words' excerpt shows: it holds what was asked
        candidate.score += weight / (K + rank)
        candidate.found_by.add(how)
        candidate.similarity = max(candidate.similarity, similarity)

    def add_list(kind: Literal["item", "excerpt"], refs: Sequence[str], how: str, weight: float = 1.0) -> None:
        seen: set[str] = set()
        for ref in refs:
            key = sessions.get(ref, ref) if kind == "excerpt" else ref
            if key not in seen:
                seen.add(key)
                add(kind, ref, len(seen), how, weight=weight)

    add_list("item", item_words, "words", item_weight)
    add_list("excerpt", excerpt_words, "words")
    for kind in ("item", "excerpt"):
        seen: set[str] = set()
        for side, ref, similarity in meaning:
            key = sessions.get(ref, ref) if side == "excerpt" else ref
            if side != kind or key in seen:
                continue
            seen.add(key)
            add(kind, ref, len(seen), "meaning", similarity, meaning_weight)
    return [c for c in found.values() if "words" in c.found_by or c.similarity >= FLOOR]


def order(
    candidates: Sequence[RecallCandidate],
    items: Mapping[str, ItemRow],
    excerpts: Mapping[str, ExcerptHit],
    limit: int,
) -> list[RecallHit]:
    """The hits, best first: recency among excerpts, items before excerpts at a tie, one excerpt per session.

    A candidate whose item or excerpt the reads no longer give is left out (another process re-projected
    its session between the lists' reads and the excerpts' own: the ids the index held are gone).
    """
    candidates = [c for c in candidates if c.ref in (items if c.kind == "item" else excerpts)]
    dates = [e.date.timestamp() for e in excerpts.values() if e.date is not None]
    oldest, newest = (min(dates), max(dates)) if dates else (0.0, 0.0)
    span = (newest - oldest) or 1.0

    def relevance(c: RecallCandidate) -> float:
        if c.kind == "item":
            return c.score + ITEM_BONUS
        date = excerpts[c.ref].date
        age = (date.timestamp() - oldest) / span if date is not None else 0.0
        return c.score * (1.0 + RECENCY * age)

    def key(c: RecallCandidate) -> tuple[Any, ...]:
        item = items.get(c.ref) if c.kind == "item" else None
        trust = TRUST_ORDER.get(item.trust, 9) if item is not None else 9
        use = -(item.use_count if item is not None else 0)
        return (-relevance(c), 0 if c.kind == "item" else 1, trust, use, c.ref)

    hits: list[RecallHit] = []
    sessions: set[UUID] = set()
    for c in sorted(candidates, key=key):
        if c.kind == "item":
            item = items.get(c.ref)
            if item is None:
                continue
            hits.append(RecallHit("item", round(relevance(c), 6), item=item, found_by=tuple(sorted(c.found_by)), similarity=c.similarity))
        else:
            excerpt = excerpts.get(c.ref)
            if excerpt is None or excerpt.session_id in sessions:
                continue
            sessions.add(excerpt.session_id)
            hits.append(RecallHit("excerpt", round(relevance(c), 6), excerpt=excerpt, found_by=tuple(sorted(c.found_by)), similarity=c.similarity))
        if len(hits) >= LOOK_FURTHER * limit:
            break
    return supersede(hits)[:limit]


LOOK_FURTHER = 3  # hits looked at for a later chat on an earlier one's subject, per hit returned
SAME_SUBJECT = 0.125  # the share of content words two excerpts must have in common to be about one subject
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


def _subject(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def supersede(hits: list[RecallHit]) -> list[RecallHit]:
    """``hits`` with each later excerpt moved right above an earlier one on the same subject that outranked it."""
    out = list(hits)
    subjects: dict[int, set[str]] = {}

    def subject(excerpt: ExcerptHit) -> set[str]:
        if excerpt.excerpt_id not in subjects:
            subjects[excerpt.excerpt_id] = _subject(excerpt.text)
        return subjects[excerpt.excerpt_id]

    i = 0
    while i < len(out):
        older = out[i].excerpt
        moved = False
        if older is not None and older.date is not None:
            for j in range(i + 1, len(out)):
                newer = out[j].excerpt
                if newer is None or newer.date is None or newer.date <= older.date:
                    continue
                a, b = subject(older), subject(newer)
                if a and b and len(a & b) / len(a | b) >= SAME_SUBJECT:
                    out.insert(i, out.pop(j))  # the moved one is checked in turn (an amendment of the amendment)
                    moved = True
                    break
        if not moved:
            i += 1
    return out
