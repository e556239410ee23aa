"""The prune plan: unselected extractions whose last use is older than the retention cutoff."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from mnemolog.domain.retention import prune_plan
from mnemolog.domain.selection import Candidate, select

from .builders import FAST, NOW, uid

WINDOW = timedelta(days=30)


def candidate(
    name: str, *, days_old: float, used_days_ago: float | None = None, used: int = 0, imported_days_ago: float | None = None
) -> Candidate:
    return Candidate(
        session_id=uid(name),
        content_hash="h",
        source_time=NOW - timedelta(days=days_old),
        use_count=used,
        last_used=None if used_days_ago is None else NOW - timedelta(days=used_days_ago),
        imported_at=None if imported_days_ago is None else NOW - timedelta(days=imported_days_ago),
    )


def test_stale_unselected_extractions_are_pruned() -> None:
    never_used = candidate("never used, old", days_old=45)
    old_used_long_ago = candidate("old, used long ago", days_old=50, used=2, used_days_ago=31)
    recent_used_long_ago = candidate("recent, used long ago", days_old=5, used=2, used_days_ago=31)
    fresh = candidate("fresh", days_old=2)
    used_lately = candidate("used lately", days_old=90, used=1, used_days_ago=1)
    imported_lately = candidate("old, imported lately", days_old=90, imported_days_ago=3)
    plan = prune_plan([never_used, old_used_long_ago, recent_used_long_ago, fresh, used_lately, imported_lately], NOW, WINDOW, limit=10)
    assert plan.cutoff == NOW - WINDOW
    assert plan.sessions == tuple(sorted([never_used.session_id, old_used_long_ago.session_id], key=str))


def test_recent_extractions_beyond_the_limit_are_kept() -> None:
    recent = [candidate(f"recent {i}", days_old=i + 1) for i in range(5)]
    assert prune_plan(recent, NOW, WINDOW, limit=2).sessions == ()


def test_an_extraction_at_the_cutoff_is_kept() -> None:
    at_the_cutoff = [candidate("made then", days_old=30), candidate("used then", days_old=50, used=1, used_days_ago=30)]
    assert prune_plan(at_the_cutoff, NOW, WINDOW, limit=0).sessions == ()


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    out = []
    for index in range(draw(st.integers(0, 12))):
        used = draw(st.integers(0, 3))
        out.append(
            candidate(
                f"s{index}",
                days_old=draw(st.integers(0, 60)),
                used=used,
                used_days_ago=draw(st.integers(0, 60)) if used else draw(st.none() | st.integers(0, 60)),
                imported_days_ago=draw(st.none() | st.integers(0, 60)),
            )
        )
    return out


@FAST
@given(found=candidates(), limit=st.integers(0, 8))
def test_a_selected_extraction_is_never_pruned(found: list[Candidate], limit: int) -> None:
    plan = prune_plan(found, NOW, WINDOW, limit)
    selected = {s.session_id for s in select(found, NOW, WINDOW, limit)}
    assert not selected & set(plan.sessions)
    assert list(plan.sessions) == sorted(plan.sessions, key=str)
    stale = {c.session_id for c in found if max(t for t in (c.source_time, c.last_used, c.imported_at) if t) < plan.cutoff}
    assert set(plan.sessions) == stale
