"""Retention and reset: withdrawing memory as events, the log's history kept.

Codex's rule: extractions not selected for consolidation and older than the
retention cutoff are pruned. Items whose evidence is then all gone are
retired by code, whatever a model later says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.selection import Candidate, select
from mnemolog.domain.session import Session

BATCH = 200


@dataclass(frozen=True)
class PrunePlan:
    """Which sessions a sweep would prune."""

    cutoff: datetime
    sessions: tuple[UUID, ...]


@dataclass(frozen=True)
class WithdrawResult:
    """What a prune or reset did."""

    sessions: tuple[UUID, ...]
    retired: tuple[UUID, ...]


def prune_plan(candidates: Sequence[Candidate], now: datetime, retention: timedelta, limit: int) -> PrunePlan:
    """Unselected extractions whose last use (or, never used, source time) is older than the cutoff."""
    cutoff = now - retention
    selected = {s.session_id for s in select(candidates, now, retention, limit)}
    stale = sorted(
        (c.session_id for c in candidates if c.session_id not in selected and (c.last_used or c.source_time) < cutoff),
        key=str,
    )
    return PrunePlan(cutoff, tuple(stale))


def _save_in_batches(app: MnemologApp, aggregates: Sequence[Session | MemoryItem]) -> None:
    for start in range(0, len(aggregates), BATCH):
        app.save_all(*aggregates[start : start + BATCH])


def _withdraw(
    app: MnemologApp,
    session_ids: Sequence[UUID],
    session_reason: str,
    items: Sequence[ItemRow],
    item_reason: str,
    by: EditedBy,
) -> WithdrawResult:
    sessions: list[Session] = []
    for session_id in session_ids:
        session: Session | None = app.find(session_id)
        if session is not None and session.prune(session_reason):
            sessions.append(session)
    retired: list[MemoryItem] = []
    for current in items:
        item: MemoryItem | None = app.find(current.item_id)
        if item is not None and item.retire(item_reason, by=by):
            retired.append(item)
    _save_in_batches(app, [*sessions, *retired])
    return WithdrawResult(tuple(s.id for s in sessions), tuple(i.id for i in retired))


def prune(
    app: MnemologApp,
    candidates: Sequence[Candidate],
    items: Sequence[ItemRow],
    live_sessions: frozenset[UUID],
    *,
    now: datetime,
    retention: timedelta = timedelta(days=30),
    limit: int = 256,
) -> WithdrawResult:
    """The retention sweep: ``Session.Pruned`` for each stale extraction, then retire what lost all evidence."""
    plan = prune_plan(candidates, now, retention, limit)
    gone = frozenset(plan.sessions)
    orphans = sole_evidence_items(items, gone, live_sessions - gone)
    return _withdraw(
        app,
        plan.sessions,
        f"retention: not selected and unused since before {plan.cutoff.date().isoformat()}",
        orphans,
        "all its evidence was pruned (retention)",
        EditedBy.CODE,
    )


def reset(app: MnemologApp, session_ids: Sequence[UUID], items: Sequence[ItemRow], reason: str = "reset") -> WithdrawResult:
    """Withdraw all memory: prune every session's extraction and retire every active item."""
    return _withdraw(app, session_ids, f"reset: {reason}", items, f"reset: {reason}", EditedBy.USER)
