"""Phase 2 selection: the retention window, the ranking, the limit; and the diff against the last run."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st
from mnemolog.domain.consolidation import InputDiff, SelectedInput
from mnemolog.domain.selection import Candidate, diff, select

from .builders import FAST, NOW, uid

WINDOW = timedelta(days=30)
CUTOFF = NOW - WINDOW


def candidate(
    name: str, *, days_old: float = 1, used: int = 0, used_days_ago: float | None = None, imported_days_ago: float | None = None
) -> Candidate:
    return Candidate(
        session_id=uid(name),
        content_hash=f"hash of {name}",
        source_time=NOW - timedelta(days=days_old),
        use_count=used,
        last_used=None if used_days_ago is None else NOW - timedelta(days=used_days_ago),
        imported_at=None if imported_days_ago is None else NOW - timedelta(days=imported_days_ago),
    )


def names(selected: tuple[SelectedInput, ...], *candidates: Candidate) -> list[str]:
    by_id = {c.session_id: c.content_hash.removeprefix("hash of ") for c in candidates}
    assert [s.rank for s in selected] == list(range(1, len(selected) + 1))
    return [by_id[s.session_id] for s in selected]


def test_the_window_counts_from_the_later_of_the_sessions_time_its_import_and_its_last_use() -> None:
    fresh = candidate("fresh", days_old=2)
    old = candidate("old", days_old=40)
    used_recently = candidate("used recently", days_old=90, used=1, used_days_ago=3)
    recent_but_used_long_ago = candidate("recent, used long ago", days_old=5, used=4, used_days_ago=31)
    old_and_used_long_ago = candidate("old, used long ago", days_old=60, used=4, used_days_ago=31)
    at_the_cutoff = candidate("at the cutoff", days_old=30)
    used_at_the_cutoff = candidate("used at the cutoff", days_old=50, used=1, used_days_ago=30)
    everyone = [fresh, old, used_recently, recent_but_used_long_ago, old_and_used_long_ago, at_the_cutoff, used_at_the_cutoff]
    assert sorted(names(select(everyone, NOW, WINDOW, 10), *everyone)) == [
        "at the cutoff",
        "fresh",
        "recent, used long ago",
        "used at the cutoff",
        "used recently",
    ]


def test_a_first_import_of_old_sessions_stays_in_the_window_for_a_window_from_the_import() -> None:
    """`run --all` imports a year of history today: the next session's consolidation must not retire it by age."""
    imported_today = candidate("a year old, imported today", days_old=365, imported_days_ago=0)
    imported_last_week = candidate("two months old, imported last week", days_old=60, imported_days_ago=7)
    imported_long_ago = candidate("two months old, imported 31 days ago", days_old=60, imported_days_ago=31)
    everyone = [imported_today, imported_last_week, imported_long_ago]
    assert sorted(names(select(everyone, NOW, WINDOW, 10), *everyone)) == [
        "a year old, imported today",
        "two months old, imported last week",
    ]


def test_ranking_is_use_count_then_last_use_then_source_time_then_id() -> None:
    most_used = candidate("most used", used=5, used_days_ago=20)
    used_lately = candidate("used lately", used=2, used_days_ago=1)
    used_earlier = candidate("used earlier", used=2, used_days_ago=10)
    newest = candidate("newest", days_old=1)
    # never used: last use is the source time, so the newer source ranks first
    older = candidate("older", days_old=2)
    twin_a = candidate("twin a", days_old=3)
    twin_b = candidate("twin b", days_old=3)
    everyone = [older, twin_b, newest, used_earlier, twin_a, used_lately, most_used]
    twins = sorted(["twin a", "twin b"], key=lambda n: str(uid(n)))  # ties go to the smaller id
    assert names(select(everyone, NOW, WINDOW, 10), *everyone) == [
        "most used", "used lately", "used earlier", "newest", "older", *twins,
    ]


def test_last_use_ties_are_broken_by_source_time() -> None:
    a = candidate("older source", days_old=20, used=1, used_days_ago=2)
    b = candidate("newer source", days_old=10, used=1, used_days_ago=2)
    assert names(select([a, b], NOW, WINDOW, 10), a, b) == ["newer source", "older source"]


def test_the_limit_keeps_the_top_ranked() -> None:
    everyone = [candidate(f"s{i}", days_old=i) for i in range(1, 6)]
    assert names(select(everyone, NOW, WINDOW, 2), *everyone) == ["s1", "s2"]
    assert select(everyone, NOW, WINDOW, 0) == ()
    assert select([], NOW, WINDOW, 5) == ()


def test_a_selected_input_carries_the_extraction_version() -> None:
    [picked] = select([candidate("one")], NOW, WINDOW, 1)
    assert picked == SelectedInput(session_id=uid("one"), content_hash="hash of one", rank=1)


def test_diff_names_added_changed_and_removed_inputs() -> None:
    def chosen(*pairs: tuple[str, str]) -> tuple[SelectedInput, ...]:
        return tuple(SelectedInput(session_id=uid(n), content_hash=h, rank=i + 1) for i, (n, h) in enumerate(pairs))

    before = chosen(("kept", "h1"), ("re-extracted", "h1"), ("dropped", "h1"), ("dropped too", "h1"))
    after = chosen(("re-extracted", "h2"), ("new", "h1"), ("kept", "h1"), ("new too", "h1"))

    def ordered(*ns: str) -> tuple:
        return tuple(sorted((uid(n) for n in ns), key=str))

    assert diff(before, after) == InputDiff(
        added=ordered("new", "new too"), changed=ordered("re-extracted"), removed=ordered("dropped", "dropped too")
    )
    assert diff(after, after) == InputDiff()
    assert diff((), after) == InputDiff(added=ordered("re-extracted", "new", "kept", "new too"))


# --- properties ------------------------------------------------------------------------


@st.composite
def candidates(draw: st.DrawFn) -> list[Candidate]:
    days = st.integers(0, 120).map(lambda halves: timedelta(hours=12 * halves))  # 0 to 60 days, ties likely
    out = []
    for index in range(draw(st.integers(0, 12))):
        used = draw(st.integers(0, 3))
        out.append(
            Candidate(
                session_id=uid(f"s{index}"),
                content_hash="h",
                source_time=NOW - draw(days),
                use_count=used,
                last_used=NOW - draw(days) if used else draw(st.none() | days.map(lambda d: NOW - d)),
                imported_at=draw(st.none() | days.map(lambda d: NOW - d)),
            )
        )
    return out


def in_window(c: Candidate) -> bool:
    """Seen within the window: its own time, its import or its last use."""
    return max(t for t in (c.source_time, c.imported_at, c.last_used) if t is not None) >= CUTOFF


def rank_key(c: Candidate) -> tuple:
    return (-c.use_count, -(c.last_used or c.source_time).timestamp(), -c.source_time.timestamp(), str(c.session_id))


@FAST
@given(found=candidates(), limit=st.integers(0, 8))
def test_select_is_a_ranking_of_the_window(found: list[Candidate], limit: int) -> None:
    picked = select(found, NOW, WINDOW, limit)
    by_id = {c.session_id: c for c in found}
    chosen = [by_id[s.session_id] for s in picked]
    assert len(picked) == min(limit, sum(map(in_window, found)))
    assert [s.rank for s in picked] == list(range(1, len(picked) + 1))
    assert all(in_window(c) for c in chosen)
    assert [rank_key(c) for c in chosen] == sorted(rank_key(c) for c in chosen)
    left_out = [c for c in found if in_window(c) and c not in chosen]
    assert not chosen or all(rank_key(c) > rank_key(chosen[-1]) for c in left_out)


@FAST
@given(before=candidates(), after=candidates(), limit=st.integers(0, 8))
def test_diff_accounts_for_every_input(before: list[Candidate], after: list[Candidate], limit: int) -> None:
    previous, current = select(before, NOW, WINDOW, limit), select(after, NOW, WINDOW, limit)
    d = diff(previous, current)
    old, new = {s.session_id for s in previous}, {s.session_id for s in current}
    assert set(d.added) == new - old and set(d.removed) == old - new and set(d.changed) <= old & new
