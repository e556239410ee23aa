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
