"""Serving memory, recorded: each read an agent makes is an ``Injection`` event (guarantee 8).

The read itself is ``domain.services.read`` (context, search, show, a memory
file); these functions run it and append what it served: the session (when
the agent gave its id), the project, each item with its rank and the reasons
it ranked there (trust, citations, recency; a search's score), and the token
count. The append is one new aggregate, no read before it; if it cannot be
written (a busy or read-only store), the agent still gets its memory.
``session_history`` answers "what was this session given, and why".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.injection import Injection, ServedItem
from mnemolog.domain.prompt_recall import PROMPT_TOKENS
from mnemolog.domain.reads import ItemRow, MemoryReads, SearchHit
from mnemolog.domain.recall import Only, Recall, RecallHit, RecallReads
from mnemolog.domain.services import read
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.tombstone_matcher import TombstoneMatcher

PROMPT_HITS = 5  # the hits a prompt's recall looks at (those clearing the floor are served, within the budget)
_ITEM_MARKER = re.compile(r"\[item:([0-9a-fA-F-]{36})\]")


def why(item: ItemRow, score: float | None = None) -> str:
    """The reasons an item ranks where it does, in words (the order reads rank by: trust, citations, recency)."""
    parts = [item.trust]
    parts.append(f"cited {item.use_count}x" if item.use_count else "never cited")
    if item.updated_at is not None:
        parts.append(f"updated {item.updated_at.date().isoformat()}")
    if score is not None:
        parts.insert(0, f"matched the query (score {score:g})")
    return "; ".join(parts)


def served_items(items: Sequence[ItemRow], scores: Sequence[float | None] | None = None) -> tuple[ServedItem, ...]:
    """The items as served, ranked 1.. in the order given."""
    given = list(scores) if scores is not None else [None] * len(items)
    return tuple(
        ServedItem(
            item_id=item.item_id,
            rank=n + 1,
            trust=item.trust,
            citations=item.use_count,
            updated_at=item.updated_at,
            score=score,
            why=why(item, score),
        )
        for n, (item, score) in enumerate(zip(items, given, strict=True))
    )


def record_served(
    uow: UnitOfWork,
    *,
    session: str | None,
    project: str,
    surface: str,
    items: Sequence[ItemRow],
    tokens: int,
    scores: Sequence[float | None] | None = None,
    excerpts: Sequence[str] = (),
) -> UUID | None:
    """Append one ``Injection``; its id, or None when the store would not take it (the read still stands)."""
    injection = Injection(
        session=(session or "").strip() or None,
        project=project,
        surface=surface,
        items=served_items(items, scores),
        tokens=tokens,
        served_at=uow.clock(),
        excerpts=tuple(excerpts),
    )
    try:
        uow.app.save_all(injection)
    except Exception:  # the log of a read must never cost the agent its memory (a busy or read-only store)
        try:
            uow.keep_served(injection.as_record())  # recorded by the next store session (record_kept)
        except Exception:  # nowhere to keep it either (a read-only home): the read still stands
            return None
        return None
    injection_id: UUID = injection.id
    return injection_id


def record_kept(uow: UnitOfWork) -> int:
    """Record the servings kept while the log would not take them, each once (under its own id); how many were recorded.

    A kept serving the log already holds (recorded, then not forgotten: a crash, or another
    process recording it too) is refused by the log and only forgotten. The first one the log
    will not take (still busy) stops the round: the rest stay kept.
    """
    from eventsourcing.persistence import IntegrityError

    recorded = 0
    for name, record in uow.kept_served():
        try:
            injection = Injection.recreate(record)
        except (KeyError, TypeError, ValueError):  # not a serving this version can read: keep it for one that can
            continue
        try:
            uow.app.save_all(injection)
            recorded += 1
        except IntegrityError:
            pass  # the log holds it already
        except Exception:
            return recorded
        uow.forget_kept(name)
    return recorded


def served_context(
    uow: UnitOfWork,
    tokenizer: read.Tokenizer,
    instructions: str,
    project: str,
    budget: int,
    *,
    session: str | None,
    surface: str,
) -> read.Context:
    """``read.context`` for ``project``, recorded as served to ``session``."""
    found = read.context(uow.reads(), uow.matcher(), tokenizer, instructions, project, budget)
    record_served(uow, session=session, project=project, surface=surface, items=found.items, tokens=found.tokens)
    return found


def context_dict(found: read.Context) -> dict[str, Any]:
    """A context as JSON-ready data: each item with its rank, the reasons it ranks there (as the injection log records them) and its tokens."""
    ranked = served_items(found.items)
    tokens = found.item_tokens if len(found.item_tokens) == len(found.items) else (None,) * len(found.items)
    return {
        "project": found.project,
        "tokens": found.tokens,
        "budget": found.budget,
        "more": found.more,
        "items": [
            {
                "id": str(item.item_id),
                "kind": item.kind,
                "scope": item.scope,
                "trust": item.trust,
                "pinned": item.pinned,
                "title": item.title,
                "rank": served.rank,
                "why": served.why,
                "tokens": cost,
            }
            for item, served, cost in zip(found.items, ranked, tokens, strict=True)
        ],
        "text": found.text,
    }


def served_search(
    uow: UnitOfWork,
    tokenizer: read.Tokenizer,
    query: str,
    project: str,
    kind: str | None,
    limit: int,
    *,
    session: str | None,
    surface: str,
) -> list[SearchHit]:
    """``read.search``, recorded as served (the hits with their scores; the query is not kept)."""
    hits = read.search(uow.reads(), uow.matcher(), query, project, kind, limit)
    tokens = tokenizer.count(json.dumps([read.hit_dict(h) for h in hits]))
    record_served(
        uow, session=session, project=project, surface=surface, items=[h.item for h in hits], tokens=tokens,
        scores=[h.score for h in hits],
    )
    return hits


def served_recall(
    uow: UnitOfWork,
    history: RecallReads,
    tokenizer: read.Tokenizer,
    query: str,
    project: str,
    *,
    only: Only | None = None,
    kind: str | None = None,
    limit: int,
    session: str | None,
    surface: str,
) -> Recall:
    """``recall.recall`` (items and history excerpts), recorded as served: the items with their scores, the excerpts by reference."""
    from mnemolog.domain.services.recall import recall, recall_hit_dict

    found = recall(uow.reads(), history, uow.matcher(), query, project, only=only, kind=kind, limit=limit)
    tokens = tokenizer.count(json.dumps([recall_hit_dict(h) for h in found.hits]))
    items = [h for h in found.hits if h.item is not None]
    record_served(
        uow, session=session, project=project, surface=surface, items=[h.item for h in items if h.item is not None],
        tokens=tokens, scores=[h.score for h in items],
        excerpts=[h.excerpt.reference() for h in found.hits if h.excerpt is not None],
    )
    return found


@dataclass(frozen=True)
class PromptRecall:
    """What one prompt was given: the text (empty when nothing bore on it) and the hits it holds."""

    text: str
    hits: tuple[RecallHit, ...]
    tokens: int
    already_given: int  # relevant hits left out because this session was given them before


def served_prompt_recall(
    uow: UnitOfWork,
    history: RecallReads,
    tokenizer: read.Tokenizer,
    prompt: str,
    project: str,
    *,
    session: str | None,
    budget: int = PROMPT_TOKENS,
    surface: str = "hook:prompt",
) -> PromptRecall:
    """The hits bearing on ``prompt`` that ``session`` was not given yet, within ``budget`` tokens, recorded as served.

    A hit bears on the prompt only when it clears ``prompt_recall.evidence``'s
    absolute floor; the session's earlier servings (any surface: its start, a
    search, an earlier prompt) are read from the injection log, so an item or
    an excerpt reaches a session once. ``budget`` includes the served-memory
    tags the hook wraps the text in. A prompt given nothing is recorded too,
    with no items and no tokens, so ``history --session`` shows it was asked.
    """
    from mnemolog.domain import served_memory
    from mnemolog.domain.prompt_recall import bearing, prompt_text
    from mnemolog.domain.services.recall import recall

    reads = uow.reads()
    found = recall(reads, history, uow.matcher(), prompt, project, limit=PROMPT_HITS)
    given_items: set[str] = set()
    given_excerpts: set[str] = set()
    for row in reads.injections(session) if session else []:
        given_items.update(str(served["item_id"]) for served in row.items)
        given_excerpts.update(row.excerpts)

    def given(hit: RecallHit) -> bool:
        if hit.item is not None:
            return str(hit.item.item_id) in given_items
        return hit.excerpt is not None and hit.excerpt.reference() in given_excerpts

    strong = bearing(found.hits, prompt)
    fresh = [h for h in strong if not given(h)]
    marks = tokenizer.count(served_memory.wrap(""))
    text, kept = prompt_text(fresh, budget - marks, tokenizer.count)
    tokens = tokenizer.count(served_memory.wrap(text)) if text else 0
    items = [h for h in kept if h.item is not None]
    record_served(
        uow, session=session, project=project, surface=surface, items=[h.item for h in items if h.item is not None],
        tokens=tokens, scores=[h.score for h in items], excerpts=[h.excerpt.reference() for h in kept if h.excerpt is not None],
    )
    return PromptRecall(text, tuple(kept), tokens, len(strong) - len(fresh))


def served_excerpt(
    uow: UnitOfWork, history: RecallReads, tokenizer: read.Tokenizer, reference: str, project: str, *, session: str | None, surface: str
) -> dict[str, Any] | None:
    """``recall.read_excerpt`` with its neighbours, as JSON-ready data, recorded as served when found."""
    from mnemolog.domain.services.recall import read_excerpt

    excerpts = read_excerpt(history, uow.matcher(), reference, project)
    if excerpts is None:
        return None
    wanted = reference.strip().strip("[]").strip()
    data = {
        "excerpt": next(e.as_dict() for e in excerpts if e.reference() == wanted),
        "around": [e.as_dict() for e in excerpts if e.reference() != wanted],
    }
    tokens = tokenizer.count(json.dumps(data))
    record_served(uow, session=session, project=project, surface=surface, items=[], tokens=tokens, excerpts=[wanted])
    return data


def served_item(
    uow: UnitOfWork, tokenizer: read.Tokenizer, reference: str, project: str, *, session: str | None, surface: str
) -> read.ShownItem | None:
    """``read.show``, recorded as served when it found the item."""
    shown = read.show(uow.reads(), uow.matcher(), reference, project)
    if shown is not None:
        tokens = tokenizer.count(json.dumps(shown.as_dict(), default=str))
        record_served(uow, session=session, project=project, surface=surface, items=[shown.item], tokens=tokens)
    return shown


def served_file(
    uow: UnitOfWork,
    tokenizer: read.Tokenizer,
    files: Mapping[str, str],
    path: str,
    project: str,
    start: int | None = None,
    end: int | None = None,
    *,
    session: str | None,
    surface: str,
) -> str | None:
    """``read.memory_file``, recorded as served: the items are those whose ``[item:<id>]`` the text holds."""
    text = read.memory_file(files, path, start, end)
    if text is None:
        return None
    reads = uow.reads()
    seen: list[ItemRow] = []
    for match in _ITEM_MARKER.finditer(text):
        row = reads.item(UUID(match.group(1)), project)
        if row is not None and row.item_id not in {r.item_id for r in seen}:
            seen.append(row)
    record_served(uow, session=session, project=project, surface=surface, items=seen, tokens=tokenizer.count(text))
    return text


# ------------------------------------------------------------------ history --session


@dataclass(frozen=True)
class SessionHistory:
    """What one session was served (and cited), oldest first."""

    session: str
    servings: tuple[dict[str, Any], ...]
    cited: tuple[str, ...]  # item ids the session cited

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "session": self.session,
            "servings": list(self.servings),
            "tokens": sum(int(s["tokens"]) for s in self.servings),
            "cited": list(self.cited),
        }


def session_history(reads: MemoryReads, matcher: TombstoneMatcher, session: str) -> SessionHistory:
    """Every serving of memory to ``session`` with each item's rank and reasons, and what it cited.

    Items are named by their current title when the session's project can
    still read them (a withheld, retired or invalidated item shows only its id).
    """
    cited = {str(i) for c in reads.citations_by(session) for i in c.item_ids}
    servings = []
    for row in reads.injections(session):
        items = []
        for served in row.items:
            item_id = str(served["item_id"])
            current = reads.item(UUID(item_id), row.project)
            readable = current is not None and current.status == "active" and not matcher.withholds(current, row.project)
            items.append(
                {
                    **served,
                    "item_id": item_id,
                    "title": current.title if readable and current is not None else None,
                    "text": current.text if readable and current is not None else None,
                    "cited": item_id in cited,
                }
            )
        servings.append(
            {
                "injection": str(row.injection_id),
                "at": row.served_at.isoformat() if row.served_at else None,
                "surface": row.surface,
                "project": row.project,
                "tokens": row.tokens,
                "items": items,
                "excerpts": list(row.excerpts),
            }
        )
    return SessionHistory(session, tuple(servings), tuple(sorted(cited)))
