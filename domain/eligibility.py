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


def assess_eligibility(facts: SessionFacts, now: datetime, policy: EligibilityPolicy) -> tuple[bool, tuple[str, ...]]:
    """Whether phase 1 may take the session now, and if not, why."""
    reasons: list[str] = []
    if not facts.interactive:
        reasons.append(f"not interactive ({facts.origin or 'unknown origin'})")
    if facts.user_message_count == 0:
        reasons.append("no user message")
    updated = facts.updated_at or facts.started_at
    if updated is not None:
        if now - updated < policy.idle:
            reasons.append(f"idle less than {policy.idle.total_seconds() / 3600:g} h")
        if policy.since is not None:
            if updated < policy.since:
                reasons.append(f"older than {policy.since.date().isoformat()}")
        elif policy.max_age is not None and now - updated > policy.max_age:
            reasons.append(f"older than {policy.max_age.days} days")
    return (not reasons, tuple(reasons))
