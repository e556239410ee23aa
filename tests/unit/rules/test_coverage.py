"""Coverage: each session is in exactly one state, judged again as time passes."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from uuid import UUID

from mnemolog.domain.coverage import Coverage, coverage, session_coverage
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.reads import SessionState

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
POLICY = EligibilityPolicy(idle=timedelta(hours=6), max_age=timedelta(days=10))
BASE = SessionState(
    session_id=UUID(int=1), source="codex", native_id="t1", scope="git:example.com/acme/api", cwd="/w",
    updated_at=NOW - timedelta(days=1), interactive=True, user_messages=2, mode="enabled", eligible=True,
    eligibility_reasons=(), extraction_status="none", current=False, attempts=0, retry_after=None, last_error=None,
    extracted_at=None, pruned=False, deleted=False,
)


def state(**changes: object) -> Coverage:
    return session_coverage(replace(BASE, **changes), NOW, POLICY).state  # type: ignore[arg-type]


def test_each_session_has_one_state() -> None:
    assert state() is Coverage.WAITING  # eligible, no answer yet: the next extract takes it
    assert state(extraction_status="extracted", current=True) is Coverage.EXTRACTED
    assert state(extraction_status="nothing", current=True) is Coverage.NOTHING
    assert state(extraction_status="extracted", current=False) is Coverage.WAITING  # the session grew since
    assert state(extraction_status="failed", last_error="401") is Coverage.FAILED
    assert state(mode="polluted") is Coverage.EXCLUDED
    assert state(pruned=True, extraction_status="extracted", current=True) is Coverage.EXCLUDED
    assert state(interactive=False, eligible=False) is Coverage.INELIGIBLE
    assert state(updated_at=NOW - timedelta(days=30)) is Coverage.INELIGIBLE


def test_waiting_says_until_when() -> None:
    recent = session_coverage(replace(BASE, updated_at=NOW - timedelta(hours=1), eligible=False), NOW, POLICY)
    assert (recent.state, recent.until) == (Coverage.WAITING, NOW + timedelta(hours=5))
    later = session_coverage(replace(BASE, updated_at=NOW - timedelta(hours=1), eligible=False), NOW + timedelta(hours=6), POLICY)
    assert (later.state, later.until) == (Coverage.WAITING, None)  # idle long enough now
    retry = session_coverage(replace(BASE, extraction_status="retrying", retry_after=NOW + timedelta(minutes=4), last_error="429"), NOW, POLICY)
    assert (retry.state, retry.until) == (Coverage.WAITING, NOW + timedelta(minutes=4))


def test_groups_count_per_agent_and_project_with_the_last_error() -> None:
    sessions = [
        BASE,
        replace(BASE, session_id=UUID(int=2), extraction_status="failed", last_error="old error", updated_at=NOW - timedelta(days=2)),
        replace(BASE, session_id=UUID(int=3), extraction_status="failed", last_error="401 Unauthorized"),
        replace(BASE, session_id=UUID(int=4), source="claude-code", extraction_status="extracted", current=True),
        replace(BASE, session_id=UUID(int=5), deleted=True),
    ]
    report = coverage(sessions, NOW, POLICY)
    codex, claude = sorted(report.groups, key=lambda g: g.agent, reverse=True)
    assert (codex.agent, codex.seen, codex.eligible, codex.waiting, codex.ready, codex.failed) == ("codex", 3, 3, 1, 1, 2)
    assert codex.last_error == "401 Unauthorized"
    assert (claude.agent, claude.extracted, claude.last_error) == ("claude-code", 1, None)
    assert report.total.seen == 4  # a deleted session is not counted
    assert report.as_dict()["total"]["failed"] == 2
