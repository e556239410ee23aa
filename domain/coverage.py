"""Coverage: how far phase 1 got with the recorded sessions, per agent and project, and why not further.

Each session not deleted is in exactly one state:

- ``extracted`` / ``nothing``: phase 1 answered for its current content;
- ``failed``: phase 1 gave up on it (``extract --retry-failed`` tries again), with the error;
- ``waiting``: it will be taken, now (``ready``) or once it has been idle long
  enough or its retry time has come (``until``);
- ``ineligible``: it will not be taken (not interactive, no user message, too
  old for the age window), with the reasons;
- ``excluded``: disabled or polluted (external context), or pruned by retention.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.reads import SessionState


class Coverage(StrEnum):
    """Where one session stands."""

    EXTRACTED = "extracted"
    NOTHING = "nothing"
    FAILED = "failed"
    WAITING = "waiting"
    INELIGIBLE = "ineligible"
    EXCLUDED = "excluded"


@dataclass(frozen=True)
class SessionCoverage:
    """One session's state, and when a waiting one may be taken (None: now)."""

    state: Coverage
    until: datetime | None = None
    reasons: tuple[str, ...] = ()


NOT_INTERACTIVE = "not interactive (`codex exec`, `claude -p` or a subagent: set extract_noninteractive to learn from the first two)"


def lasting_reasons(session: SessionState, now: datetime, policy: EligibilityPolicy) -> list[str]:
    """Why phase 1 will not take the session however long one waits (empty: it will, in time)."""
    reasons: list[str] = []
    if not session.interactive:
        reasons.append(NOT_INTERACTIVE)
    if session.user_messages == 0:
        reasons.append("no user message")
    updated = session.updated_at
    if updated is not None:
        if policy.since is not None:
            if updated < policy.since:
                reasons.append(f"older than {policy.since.date().isoformat()}")
        elif policy.max_age is not None and now - updated > policy.max_age:
            reasons.append(f"older than {policy.max_age.days} days")
    return reasons


def session_coverage(session: SessionState, now: datetime, policy: EligibilityPolicy) -> SessionCoverage:
    """Where ``session`` stands now under ``policy`` (its eligibility re-judged: time passes)."""
    if session.mode != "enabled":
        return SessionCoverage(Coverage.EXCLUDED, reasons=(session.mode,))
    if session.pruned:
        return SessionCoverage(Coverage.EXCLUDED, reasons=("pruned",))
    if session.current:
        return SessionCoverage(Coverage.EXTRACTED if session.extraction_status == "extracted" else Coverage.NOTHING)
    if session.extraction_status == "failed":
        return SessionCoverage(Coverage.FAILED, reasons=(session.last_error or "unknown error",))
    if session.extraction_status == "retrying":
        until = session.retry_after if session.retry_after is not None and session.retry_after > now else None
        return SessionCoverage(Coverage.WAITING, until, (f"retry after: {session.last_error or 'an error'}",))
    lasting = lasting_reasons(session, now, policy)
    if lasting:
        return SessionCoverage(Coverage.INELIGIBLE, reasons=tuple(lasting))
    if session.updated_at is not None and now - session.updated_at < policy.idle:
        return SessionCoverage(Coverage.WAITING, session.updated_at + policy.idle, (f"idle less than {policy.idle.total_seconds() / 3600:g} h",))
    return SessionCoverage(Coverage.WAITING)


@dataclass
class CoverageGroup:
    """The sessions of one agent in one project, counted by state."""

    agent: str
    project: str
    seen: int = 0
    eligible: int = 0  # extracted, nothing, failed or waiting: phase 1 takes (or took) them
    waiting: int = 0
    ready: int = 0  # of the waiting ones, those the next extract takes
    waiting_until: datetime | None = None  # when the last waiting one may be taken
    extracted: int = 0
    nothing: int = 0
    failed: int = 0
    ineligible: int = 0
    excluded: int = 0
    last_error: str | None = None  # of the most recent failed (or retrying) session
    last_error_at: datetime | None = None
    reasons: dict[str, int] = field(default_factory=dict)  # why sessions are ineligible or excluded

    def add(self, session: SessionState, where: SessionCoverage) -> None:
        """Count one session."""
        self.seen += 1
        state = where.state
        setattr(self, state.value, getattr(self, state.value) + 1)
        if state in (Coverage.EXTRACTED, Coverage.NOTHING, Coverage.FAILED, Coverage.WAITING):
            self.eligible += 1
        if state is Coverage.WAITING:
            if where.until is None:
                self.ready += 1
            elif self.waiting_until is None or where.until > self.waiting_until:
                self.waiting_until = where.until
        if state in (Coverage.INELIGIBLE, Coverage.EXCLUDED):
            for reason in where.reasons:
                self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if session.last_error and state in (Coverage.FAILED, Coverage.WAITING):
            at = session.updated_at
            if self.last_error_at is None or (at is not None and at >= self.last_error_at):
                self.last_error, self.last_error_at = session.last_error, at

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "agent": self.agent,
            "project": self.project,
            "seen": self.seen,
            "eligible": self.eligible,
            "waiting": self.waiting,
            "ready": self.ready,
            "waiting_until": self.waiting_until.isoformat() if self.waiting_until else None,
            "extracted": self.extracted,
            "nothing": self.nothing,
            "failed": self.failed,
            "ineligible": self.ineligible,
            "excluded": self.excluded,
            "last_error": self.last_error,
            "reasons": dict(sorted(self.reasons.items())),
        }


@dataclass(frozen=True)
class CoverageReport:
    """Coverage per agent and project, and over everything."""

    at: datetime
    groups: tuple[CoverageGroup, ...]
    total: CoverageGroup

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"at": self.at.isoformat(), "groups": [g.as_dict() for g in self.groups], "total": self.total.as_dict()}


def coverage(sessions: Iterable[SessionState], now: datetime, policy: EligibilityPolicy) -> CoverageReport:
    """Count ``sessions`` by state, per (agent, project) and in total, under ``policy`` at ``now``."""
    groups: dict[tuple[str, str], CoverageGroup] = {}
    total = CoverageGroup("all", "all")
    for session in sessions:
        if session.deleted:
            continue
        where = session_coverage(session, now, policy)
        key = (session.source, session.scope)
        groups.setdefault(key, CoverageGroup(*key)).add(session, where)
        total.add(session, where)
    return CoverageReport(now, tuple(groups[k] for k in sorted(groups)), total)
