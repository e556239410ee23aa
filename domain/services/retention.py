"""Withdrawing memory as events, the log's history kept: the retention sweep and a reset.

Items whose evidence is all pruned are retired by code (guarantee 2), whatever
a model later says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.retention import prune_plan
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import Session

BATCH = 200  # aggregates per transaction: a reset of a large store is many small saves
RETENTION = timedelta(days=30)  # Codex's window
SELECTION_LIMIT = 256


@dataclass(frozen=True)
class WithdrawReport:
    """What a prune or a reset did."""

    sessions: tuple[UUID, ...]  # extractions withdrawn (Session.Pruned)
    retired: tuple[UUID, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"pruned": [str(s) for s in self.sessions], "retired": [str(i) for i in self.retired]}


def prune(uow: UnitOfWork, *, retention: timedelta = RETENTION, limit: int = SELECTION_LIMIT) -> WithdrawReport:
    """The retention sweep: ``Session.Pruned`` for each stale, unselected extraction, then retire what lost all evidence."""
    reads = uow.reads()
    plan = prune_plan(reads.candidates(), uow.clock(), retention, limit)
    gone = frozenset(plan.sessions)
    live = (reads.live_session_ids() | reads.live_note_ids()) - gone  # a standing note is evidence too
    orphans = sole_evidence_items(reads.active_items(), gone, live)
    return _withdraw(
        uow.app,
        plan.sessions,
        f"retention: not selected and unused since before {plan.cutoff.date().isoformat()}",
        orphans,
        "all its evidence was pruned (retention)",
        EditedBy.CODE,
    )


def reset(uow: UnitOfWork, reason: str = "at the user's request") -> WithdrawReport:
    """Withdraw all memory: prune every session's extraction and retire every active item."""
    reads = uow.reads()
    return _withdraw(
        uow.app, reads.withdrawable_session_ids(), f"reset: {reason}", reads.active_items(), f"reset: {reason}", EditedBy.USER
    )


def _withdraw(
    app: MnemologApp,
    session_ids: Sequence[UUID],
    session_reason: str,
    items: Sequence[ItemRow],
    item_reason: str,
    by: EditedBy,
) -> WithdrawReport:
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
    aggregates: list[Session | MemoryItem] = [*sessions, *retired]
    for start in range(0, len(aggregates), BATCH):
        app.save_all(*aggregates[start : start + BATCH])
    return WithdrawReport(tuple(s.id for s in sessions), tuple(i.id for i in retired))
