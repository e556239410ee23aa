"""Recording sessions: new, updated or unchanged; pollution and eligibility as events."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.eligibility import EligibilityPolicy, assess_eligibility
from mnemolog.domain.session import Session, SessionFacts, SessionMode, session_id_for
from mnemolog.domain.transcript import TranscriptItem


class IngestOutcome(StrEnum):
    """What recording one session file did."""

    NEW = "new"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


@dataclass(frozen=True)
class Pollution:
    """Why a session must not feed memory (web search, MCP tools), when configured."""

    reason: str


def record_session(
    app: MnemologApp,
    facts: SessionFacts,
    transcript: tuple[TranscriptItem, ...],
    *,
    now: datetime,
    policy: EligibilityPolicy,
    pollution: Pollution | None = None,
) -> IngestOutcome:
    """Record a session file's content; safe to run concurrently (retries on conflict)."""

    def command() -> IngestOutcome:
        session: Session | None = app.find(session_id_for(facts.source, facts.native_id))
        if session is None:
            session = Session(facts=facts, transcript=transcript)
            outcome = IngestOutcome.NEW
        elif session.update(facts, transcript):
            outcome = IngestOutcome.UPDATED
        else:
            outcome = IngestOutcome.UNCHANGED
        if pollution is not None:
            session.change_mode(SessionMode.POLLUTED, pollution.reason)
        eligible, reasons = assess_eligibility(session.facts, now, policy)
        session.assess(eligible, reasons)
        app.save_all(session)
        return outcome

    return app.retrying(command)


def reassess(app: MnemologApp, session_id: object, now: datetime, policy: EligibilityPolicy) -> bool:
    """Re-check eligibility (time passes: a session becomes idle); returns whether eligible."""

    def command() -> bool:
        session: Session | None = app.find(session_id)  # type: ignore[arg-type]
        if session is None:
            return False
        eligible, reasons = assess_eligibility(session.facts, now, policy)
        if session.assess(eligible, reasons):
            app.save_all(session)
        return eligible

    return app.retrying(command)
