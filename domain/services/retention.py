"""Withdrawing memory as events, the log's history kept: the retention sweep and a reset, each planned, then applied.

Items whose evidence is all pruned are retired by code (guarantee 2), whatever
a model later says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.retention import prune_plan
from mnemolog.domain.services.plans import EVERYTHING, SOLE_EVIDENCE, Retirement, dry_run_dict, ids
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
    written: int = 0  # the last notification id written

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"pruned": ids(self.sessions), "retired": ids(self.retired)}


@dataclass(frozen=True)
class WithdrawPlan:
    """What a prune or a reset will do: the extractions to withdraw and the items to retire."""

    action: str  # prune | reset
    sessions: tuple[UUID, ...]  # extractions to withdraw (Session.Pruned)
    retired: tuple[Retirement, ...]
    session_reason: str
    item_reason: str
    by: EditedBy

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the keys of a forget's dry run, so both read alike)."""
        return dry_run_dict(self.action, self.retired, pruned=self.sessions)

    def apply(self, uow: UnitOfWork) -> WithdrawReport:
        """Withdraw the planned extractions and retire the planned items, those not already gone."""
        app = uow.app
        sessions: list[Session] = []
        for session_id in self.sessions:
            session: Session | None = app.find(session_id)
            if session is not None and session.prune(self.session_reason):
                sessions.append(session)
        retired: list[MemoryItem] = []
        for planned in self.retired:
            item: MemoryItem | None = app.find(planned.item_id)
            if item is not None and item.retire(self.item_reason, by=self.by):
                retired.append(item)
        aggregates: list[Session | MemoryItem] = [*sessions, *retired]
        for start in range(0, len(aggregates), BATCH):
            app.save_all(*aggregates[start : start + BATCH])
        return WithdrawReport(tuple(s.id for s in sessions), tuple(i.id for i in retired), app.last_written)


def plan_prune(uow: UnitOfWork, *, retention: timedelta = RETENTION, limit: int = SELECTION_LIMIT) -> WithdrawPlan:
    """The retention sweep's plan: each stale, unselected extraction, and the items it leaves without evidence."""
    reads = uow.reads()
    plan = prune_plan(reads.candidates(), uow.clock(), retention, limit)
    gone = frozenset(plan.sessions)
    live = (reads.live_session_ids() | reads.live_note_ids()) - gone  # a standing note is evidence too
    orphans = sole_evidence_items(reads.active_items(), gone, live)
    return WithdrawPlan(
        "prune",
        tuple(plan.sessions),
        tuple(Retirement.of(r, SOLE_EVIDENCE) for r in orphans),
        f"retention: not selected and unused since before {plan.cutoff.date().isoformat()}",
        "all its evidence was pruned (retention)",
        EditedBy.CODE,
    )


def plan_reset(uow: UnitOfWork, reason: str = "at the user's request") -> WithdrawPlan:
    """A reset's plan: every session's extraction withdrawn, every active item retired."""
    reads = uow.reads()
    return WithdrawPlan(
        "reset",
        tuple(reads.withdrawable_session_ids()),
        tuple(Retirement.of(r, EVERYTHING) for r in reads.active_items()),
        f"reset: {reason}",
        f"reset: {reason}",
        EditedBy.USER,
    )


def prune(uow: UnitOfWork, *, retention: timedelta = RETENTION, limit: int = SELECTION_LIMIT) -> WithdrawReport:
    """The retention sweep now: ``plan_prune`` applied."""
    return plan_prune(uow, retention=retention, limit=limit).apply(uow)


def reset(uow: UnitOfWork, reason: str = "at the user's request") -> WithdrawReport:
    """Withdraw all memory now: ``plan_reset`` applied."""
    return plan_reset(uow, reason).apply(uow)
