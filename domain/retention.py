"""The prune plan: which extractions a retention sweep withdraws.

Codex's rule: extractions not selected for consolidation and older than the
retention cutoff are pruned. The sweep itself (and the retirement of items
whose evidence is then all gone) is ``domain.services.retention``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from mnemolog.domain.selection import Candidate, select


@dataclass(frozen=True)
class PrunePlan:
    """Which sessions a sweep would prune."""

    cutoff: datetime
    sessions: tuple[UUID, ...]


def prune_plan(candidates: Sequence[Candidate], now: datetime, retention: timedelta, limit: int) -> PrunePlan:
    """Unselected extractions last seen (their time, import or last use) before the cutoff."""
    cutoff = now - retention
    selected = {s.session_id for s in select(candidates, now, retention, limit)}
    stale = sorted(
        (c.session_id for c in candidates if c.session_id not in selected and c.last_seen < cutoff),
        key=str,
    )
    return PrunePlan(cutoff, tuple(stale))
