"""Eligibility: which recorded sessions phase 1 may take, and why not (Codex's defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemolog.domain.session import SessionFacts


@dataclass(frozen=True)
class EligibilityPolicy:
    """Which sessions phase 1 may take (Codex's defaults: idle 6 h, at most 10 days old)."""

    idle: timedelta = timedelta(hours=6)
    max_age: timedelta | None = timedelta(days=10)
    since: datetime | None = None  # overrides max_age: sessions updated at or after this time
    # `codex exec` / `claude -p` sessions (no human typed the prompts); subagent threads never.
    include_noninteractive: bool = False


IDLE_REASON = "idle less than"


def eligible_at(facts: SessionFacts, now: datetime, policy: EligibilityPolicy) -> datetime | None:
    """When a session that waits only for the idle window becomes eligible (None: it is not waiting for that)."""
    eligible, reasons = assess_eligibility(facts, now, policy)
    updated = facts.updated_at or facts.started_at
    if eligible or updated is None or not reasons or not all(r.startswith(IDLE_REASON) for r in reasons):
        return None
    return updated + policy.idle


def assess_eligibility(facts: SessionFacts, now: datetime, policy: EligibilityPolicy) -> tuple[bool, tuple[str, ...]]:
    """Whether phase 1 may take the session now, and if not, why."""
    reasons: list[str] = []
    if not facts.interactive and not (policy.include_noninteractive and facts.origin != "subagent"):
        reasons.append(f"not interactive ({facts.origin or 'unknown origin'})")
    if facts.user_message_count == 0:
        reasons.append("no user message")
    updated = facts.updated_at or facts.started_at
    if updated is not None:
        if now - updated < policy.idle:
            reasons.append(f"{IDLE_REASON} {policy.idle.total_seconds() / 3600:g} h")
        if policy.since is not None:
            if updated < policy.since:
                reasons.append(f"older than {policy.since.date().isoformat()}")
        elif policy.max_age is not None and now - updated > policy.max_age:
            reasons.append(f"older than {policy.max_age.days} days")
    return (not reasons, tuple(reasons))
