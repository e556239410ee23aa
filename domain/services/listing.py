"""Listing what memory holds: items, sessions, notes, tombstones and consolidation runs, with filters.

Reads only. Items are for a project P (P's and global ones) or, for
administration, every scope (``project`` None); an item a tombstone reaching
its reader withholds is left out (guarantee 1), as every read does. A
tombstone is listed by id, scope and reason, never by its value.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mnemolog.domain.coverage import Coverage, session_coverage
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.memory_item import ItemStatus, Trust
from mnemolog.domain.plan import ItemKindName
from mnemolog.domain.reads import ItemRow, MemoryReads, NoteRow, RunRow, SessionState, TombstoneRow
from mnemolog.domain.tombstone_matcher import TombstoneMatcher

KINDS = tuple(k.value for k in ItemKindName)
TRUSTS = tuple(t.value for t in Trust)
ITEM_STATUSES = tuple(s.value for s in ItemStatus)
SESSION_STATES = tuple(c.value for c in Coverage)
NOTE_STATES = ("pending", "applied", "withdrawn")
TOMBSTONE_STATES = ("active", "lifted")
RUN_STATES = ("running", "completed", "failed")
STATUSES = {
    "items": ITEM_STATUSES,
    "sessions": SESSION_STATES,
    "notes": NOTE_STATES,
    "tombstones": TOMBSTONE_STATES,
    "runs": RUN_STATES,
}


class BadFilter(ValueError):
    """A filter value that is not one of the allowed ones."""


def _check(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise BadFilter(f"unknown {name} {value!r} (expected one of {', '.join(allowed)})")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _has(text: str | None, *fields: str | None) -> bool:
    return not text or any(text.lower() in (f or "").lower() for f in fields)


def list_items(
    reads: MemoryReads,
    matcher: TombstoneMatcher,
    project: str | None,
    *,
    kind: str | None = None,
    trust: str | None = None,
    status: str | None = None,
    text: str | None = None,
    limit: int = 200,
) -> list[ItemRow]:
    """Items of ``project`` and global (every scope when None) matching the filters, pinned first, newest next.

    Raises ``BadFilter`` for an unknown kind, trust or status.
    """
    _check("kind", kind, KINDS)
    _check("trust", trust, TRUSTS)
    _check("status", status, ITEM_STATUSES)
    rows = reads.list_items(project, kind=kind, trust=trust, status=status, text=text, limit=limit)
    return [row for row in rows if not matcher.withholds(row, project if project is not None else row.scope)]


@dataclass(frozen=True)
class ListedSession:
    """A session with where it stands in phase 1."""

    session: SessionState
    state: str
    until: datetime | None
    reasons: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the agent's own id is the one users know; ours is ``id``)."""
        s = self.session
        return {
            "id": str(s.session_id),
            "native_id": s.native_id,
            "agent": s.source,
            "project": s.scope,
            "cwd": s.cwd,
            "updated_at": _iso(s.updated_at),
            "state": self.state,
            "until": _iso(self.until),
            "reasons": list(self.reasons),
            "attempts": s.attempts,
            "last_error": s.last_error,
            "extracted_at": _iso(s.extracted_at),
        }


def list_sessions(
    reads: MemoryReads,
    now: datetime,
    policy: EligibilityPolicy,
    project: str | None = None,
    *,
    agent: str | None = None,
    status: str | None = None,
    text: str | None = None,
    limit: int = 200,
) -> list[ListedSession]:
    """Sessions (of ``project`` only, when given), newest first, each with its coverage state; filtered by
    agent, state and ``text`` (in the cwd or the agent's session id). Raises ``BadFilter``."""
    _check("status", status, SESSION_STATES)
    out: list[ListedSession] = []
    for session in reads.session_states(project):
        where = session_coverage(session, now, policy)
        if (agent and session.source != agent) or (status and where.state.value != status):
            continue
        if not _has(text, session.cwd, session.native_id):
            continue
        out.append(ListedSession(session, where.state.value, where.until, where.reasons))
        if len(out) >= limit:
            break
    return out


def list_notes(
    reads: MemoryReads, project: str | None, *, intent: str | None = None, status: str | None = None, text: str | None = None
) -> list[NoteRow]:
    """Notes of ``project`` and global (all when None), oldest first, by intent, state and text. Raises ``BadFilter``."""
    _check("intent", intent, ("remember", "correct"))
    _check("status", status, NOTE_STATES)
    return [
        n
        for n in reads.notes(project)
        if (intent is None or n.intent == intent) and (status is None or n.state == status) and _has(text, n.text, n.source)
    ]


def list_tombstones(
    reads: MemoryReads, project: str | None, *, status: str | None = None, text: str | None = None
) -> list[TombstoneRow]:
    """Tombstones of ``project`` and global ones (all when None), newest first; ``text`` matches the reason."""
    _check("status", status, TOMBSTONE_STATES)
    return [
        t
        for t in reads.tombstones(project)
        if (status is None or (t.lifted == (status == "lifted"))) and _has(text, t.reason)
    ]


def list_runs(reads: MemoryReads, *, status: str | None = None, text: str | None = None, limit: int = 50) -> list[RunRow]:
    """The latest consolidation runs, newest first; ``text`` matches the model or the error."""
    _check("status", status, RUN_STATES)
    return [r for r in reads.runs(limit) if (status is None or r.status == status) and _has(text, r.model, r.error)]
