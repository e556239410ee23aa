"""Eligibility: which recorded sessions phase 1 may take now, and the reasons it may not."""

from __future__ import annotations

from datetime import datetime, timedelta

from mnemolog.domain.eligibility import EligibilityPolicy, assess_eligibility, eligible_at
from mnemolog.domain.session import SessionFacts

from .builders import API, NOW

DEFAULT = EligibilityPolicy()


def facts(*, idle: timedelta | None = timedelta(hours=7), **extra: object) -> SessionFacts:
    values: dict[str, object] = {
        "source": "codex",
        "native_id": "019a",
        "path": "/home/dev/.codex/sessions/rollout.jsonl",
        "scope": API,
        "origin": "cli",
        "content_hash": "h",
        "user_message_count": 2,
        "started_at": None if idle is None else NOW - idle - timedelta(hours=1),
        "updated_at": None if idle is None else NOW - idle,
    }
    values.update(extra)
    return SessionFacts.model_validate(values)


def test_an_idle_interactive_recent_session_with_a_user_message_is_eligible() -> None:
    assert assess_eligibility(facts(), NOW, DEFAULT) == (True, ())


def test_a_session_still_in_use_waits_for_the_idle_time() -> None:
    assert assess_eligibility(facts(idle=timedelta(hours=1)), NOW, DEFAULT) == (False, ("idle less than 6 h",))
    assert assess_eligibility(facts(idle=timedelta(hours=6)), NOW, DEFAULT) == (True, ())
    short = EligibilityPolicy(idle=timedelta(minutes=30))
    assert assess_eligibility(facts(idle=timedelta(minutes=10)), NOW, short) == (False, ("idle less than 0.5 h",))


def test_a_session_older_than_the_max_age_is_not_taken() -> None:
    assert assess_eligibility(facts(idle=timedelta(days=11)), NOW, DEFAULT) == (False, ("older than 10 days",))
    assert assess_eligibility(facts(idle=timedelta(days=10)), NOW, DEFAULT) == (True, ())
    assert assess_eligibility(facts(idle=timedelta(days=400)), NOW, EligibilityPolicy(max_age=None)) == (True, ())


def test_since_replaces_the_max_age() -> None:
    since = EligibilityPolicy(since=datetime(2026, 10, 1, tzinfo=NOW.tzinfo))
    assert assess_eligibility(facts(idle=timedelta(days=20)), NOW, since) == (True, ())
    assert assess_eligibility(facts(idle=timedelta(days=40)), NOW, since) == (False, ("older than 2026-10-01",))


def test_a_non_interactive_session_is_not_taken() -> None:
    assert assess_eligibility(facts(interactive=False, origin="exec"), NOW, DEFAULT) == (
        False,
        ("not interactive (exec)",),
    )
    assert assess_eligibility(facts(interactive=False, origin=None), NOW, DEFAULT) == (
        False,
        ("not interactive (unknown origin)",),
    )


def test_a_session_without_a_user_message_is_not_taken() -> None:
    assert assess_eligibility(facts(user_message_count=0), NOW, DEFAULT) == (False, ("no user message",))


def test_every_reason_is_given() -> None:
    assert assess_eligibility(
        facts(interactive=False, origin="exec", user_message_count=0, idle=timedelta(minutes=5)), NOW, DEFAULT
    ) == (False, ("not interactive (exec)", "no user message", "idle less than 6 h"))


def test_the_start_time_stands_in_for_a_missing_update_time() -> None:
    recent = facts(idle=None, started_at=NOW - timedelta(hours=1))
    assert assess_eligibility(recent, NOW, DEFAULT) == (False, ("idle less than 6 h",))


def test_a_session_without_times_is_judged_on_the_rest() -> None:
    assert assess_eligibility(facts(idle=None), NOW, DEFAULT) == (True, ())


def test_exec_sessions_wait_for_the_setting_and_subagents_never_come() -> None:
    scripted = facts(origin="exec", interactive=False)
    assert assess_eligibility(scripted, NOW, DEFAULT) == (False, ("not interactive (exec)",))
    opted_in = EligibilityPolicy(include_noninteractive=True)
    assert assess_eligibility(scripted, NOW, opted_in) == (True, ())
    subagent = facts(origin="subagent", interactive=False)
    assert assess_eligibility(subagent, NOW, opted_in)[0] is False


def test_a_session_waiting_only_for_the_idle_window_says_when_it_becomes_eligible() -> None:
    busy = facts(idle=timedelta(minutes=20))
    assert eligible_at(busy, NOW, DEFAULT) == busy.updated_at + timedelta(hours=6)  # type: ignore[operator]
    assert eligible_at(facts(), NOW, DEFAULT) is None  # eligible already
    assert eligible_at(facts(idle=timedelta(minutes=20), user_message_count=0), NOW, DEFAULT) is None  # waits for nothing
