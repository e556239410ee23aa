"""Phase 2 selection: which extractions feed a consolidation, ranked (Codex's rule)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from mnemolog.domain.consolidation import InputDiff, SelectedInput


@dataclass(frozen=True)
class Candidate:
    """A session with a current extraction, as the usage-rank view sees it."""

    session_id: UUID
    content_hash: str
    source_time: datetime
    use_count: int = 0
    last_used: datetime | None = None
    imported_at: datetime | None = None  # when mnemolog first recorded it (a first `run --all` imports old sessions today)

    @property
    def last_seen(self) -> datetime:
        """The later of the session's own time, its import and its last use: what the retention window counts from."""
        return max(t for t in (self.source_time, self.imported_at, self.last_used) if t is not None)


def select(
    candidates: Iterable[Candidate], now: datetime, retention: timedelta, limit: int
) -> tuple[SelectedInput, ...]:
    """Seen within the retention window (its time, its import or its last use: ``last_seen``), ranked
    by usage count, last use (or source time), source time, then id; top ``limit``."""
    cutoff = now - retention
    kept = [c for c in candidates if c.last_seen >= cutoff]
    kept.sort(
        key=lambda c: (
            -c.use_count,
            -(c.last_used or c.source_time).timestamp(),
            -c.source_time.timestamp(),
            str(c.session_id),
        )
    )
    return tuple(
        SelectedInput(session_id=c.session_id, content_hash=c.content_hash, rank=i + 1)
        for i, c in enumerate(kept[:limit])
    )


def diff(previous: Sequence[SelectedInput], current: Sequence[SelectedInput]) -> InputDiff:
    """Inputs added, changed (new extraction version) and removed since the last completed run."""
    before = {s.session_id: s.content_hash for s in previous}
    after = {s.session_id: s.content_hash for s in current}
    return InputDiff(
        added=tuple(sorted((s for s in after if s not in before), key=str)),
        changed=tuple(sorted((s for s in after if s in before and after[s] != before[s]), key=str)),
        removed=tuple(sorted((s for s in before if s not in after), key=str)),
    )


def why_left(
    candidates: Iterable[Candidate], selected: Sequence[SelectedInput], now: datetime, retention: timedelta
) -> dict[UUID, str]:
    """Why each live session with an extraction is not in the selection, in words a person reads in ``explain``.

    A session seen before the window opened left it; one seen within it was
    ranked out by the selection limit. (Deleted, pruned or polluted sessions are
    no candidates: their items retire because their evidence is gone.)
    """
    chosen = {s.session_id for s in selected}
    cutoff = now - retention
    return {
        c.session_id: (f"left the {retention.days}-day retention window" if c.last_seen < cutoff else "ranked below the sessions phase 2 keeps")
        for c in candidates
        if c.session_id not in chosen
    }


def retired_by_age(evidence: Sequence[UUID], left: dict[UUID, str]) -> str | None:
    """The true reason an item retires when every session of its evidence only left the selection (None: not so)."""
    reasons = sorted({left[e] for e in evidence if e in left})
    if not evidence or any(e not in left for e in evidence):
        return None
    return f"its sessions {' or '.join(reasons)}"
