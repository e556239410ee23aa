"""Search as an agent or a person makes it: memory items and history excerpts, by words and by meaning.

The read rules of ``read.py`` hold here too: a reader in project P gets P's
items and the user-wide ones, and excerpts of P's sessions only; an item a
tombstone withholds from P is never a hit, and an excerpt's text is scrubbed
for P before it is shown (the views scrub stored texts when a value is
forgotten; this is the guard for anything recorded since).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from uuid import UUID

from mnemolog.domain.reads import ItemReads, ItemRow
from mnemolog.domain.recall import ExcerptHit, Only, Recall, RecallHit, RecallReads, fuse, order
from mnemolog.domain.services.read import KINDS, item_dict, search
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, reaches

PARTIAL = 0.5  # the weight of items by words when none holds every word of the query
POOL = 30  # candidates drawn from each list (at least; three times the hits asked for)


def recall(
    reads: ItemReads,
    history: RecallReads,
    matcher: TombstoneMatcher,
    query: str,
    project: str,
    *,
    only: Only | None = None,
    kind: str | None = None,
    limit: int = 10,
) -> Recall:
    """The best ``limit`` items and excerpts for ``query`` in ``project``, best first.

    ``only`` keeps one side (``items`` or ``history``); ``kind`` keeps items of
    one kind (and so no excerpts). Raises ValueError for an unknown kind or side.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    if only not in (None, "items", "history"):
        raise ValueError(f"unknown side {only!r} (expected items or history)")
    if limit <= 0 or not query.strip():
        return Recall((), history.semantic)
    with_items, with_history = only != "history", only != "items" and kind is None
    pool = max(POOL, 3 * limit)
    # Items holding every word count in full; when none does, items holding some count half: a short item sharing
    # a word or two with a long question says little (the meaning list finds those), while a chat is long and
    # BM25 ranks it by any word it shares.
    item_hits = search(reads, matcher, query, project, kind, pool, any_word=False) if with_items else []
    partial = with_items and not item_hits
    if partial:
        item_hits = search(reads, matcher, query, project, kind, pool)
    chat_hits = history.chat_matches(query, project, pool) if with_history else []
    meaning = history.nearest(query, project, pool, items=with_items, excerpts=with_history)

    items: dict[str, ItemRow] = {str(h.item.item_id): h.item for h in item_hits}
    for side, ref, _ in meaning:
        if side == "item" and ref not in items:
            row = reads.item(UUID(ref), project)
            if row is not None and row.status == "active" and (kind is None or row.kind == kind) and not matcher.withholds(row, project):
                items[ref] = row
    excerpts: dict[str, ExcerptHit] = {str(e.excerpt_id): e for e in chat_hits}
    wanted = [int(ref) for side, ref, _ in meaning if side == "excerpt" and ref not in excerpts]
    excerpts.update({str(i): e for i, e in history.excerpts(wanted, project).items()})
    if any(reaches(rule.scope, project) for rule in matcher.rules):
        excerpts = {ref: replace(e, text=matcher.scrub(e.text, project)[0]) for ref, e in excerpts.items()}

    candidates = fuse(
        [str(h.item.item_id) for h in item_hits], [str(e.excerpt_id) for e in chat_hits], meaning,
        item_weight=PARTIAL if partial else 1.0, meaning_weight=history.meaning_weight, session_of={ref: str(e.session_id) for ref, e in excerpts.items()},
    )
    return Recall(tuple(order(candidates, items, excerpts, limit)), history.semantic)


def recall_hit_dict(hit: RecallHit) -> dict[str, Any]:
    """A hit as JSON-ready data: what it is (``item`` or ``excerpt``), its score, how it was found, and the hit itself."""
    body = item_dict(hit.item) if hit.item is not None else hit.excerpt.as_dict() if hit.excerpt is not None else {}
    return {"type": hit.kind, "score": hit.score, "found_by": list(hit.found_by), **body}


HISTORY_PREFIX = "history:"


def excerpt_reference(reference: str) -> tuple[str, int] | None:
    """The (agent's session id, excerpt number) of ``history:<session>:<n>``; None when it is not one."""
    text = reference.strip().strip("[]").strip()
    if not text.startswith(HISTORY_PREFIX):
        return None
    session, _, number = text.removeprefix(HISTORY_PREFIX).rpartition(":")
    if not session or not number.isdigit():
        return None
    return session, int(number)


def read_excerpt(history: RecallReads, matcher: TombstoneMatcher, reference: str, project: str, around: int = 1) -> list[ExcerptHit] | None:
    """The excerpt ``reference`` names with ``around`` neighbours each side, scrubbed for ``project``; None when it is not ``project``'s."""
    found = excerpt_reference(reference)
    if found is None:
        return None
    session, n = found
    excerpts = history.session_excerpts(session, project, max(n - around, 0), n + around)
    if not any(e.n == n for e in excerpts):
        return None
    if any(reaches(rule.scope, project) for rule in matcher.rules):
        excerpts = [replace(e, text=matcher.scrub(e.text, project)[0]) for e in excerpts]
    return excerpts
