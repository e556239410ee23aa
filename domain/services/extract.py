"""Extract (phase 1): claim each pending session version, ask a model, store what it answered.

Claims hold across processes: a claim is an event on the session, so two
workers that claim the same version conflict on its version number and only
one wins. A crashed worker's claim is taken over at once when it ran on this
host (its process is gone), else when its lease expires. A failed model
call is retried later with backoff, up to a cap, then left failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from mnemolog.domain import fault_points
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.eligibility import EligibilityPolicy, assess_eligibility, eligible_at
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.holes import has_hole, transcript_without_holes, without_holes
from mnemolog.domain.ports import Extractor, ModelError, Progress, Redactor, no_progress
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import ClaimRefused, Session
from mnemolog.domain.tombstone import record_suppression
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript


class ExtractOutcome(StrEnum):
    """What happened to one session in phase 1."""

    EXTRACTED = "extracted"
    NOTHING = "nothing"
    FAILED = "failed"
    GAVE_UP = "gave_up"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class ExtractResult:
    """One session's phase-1 result, for progress and the --json summary."""

    session_id: UUID
    outcome: ExtractOutcome
    detail: str = ""
    input_tokens: int = 0
    plain_input_tokens: int | None = None


@dataclass
class ExtractReport:
    """What one extract run did."""

    results: list[ExtractResult] = field(default_factory=list)
    # Sessions that wait only for the idle window, with when each becomes eligible.
    waiting: list[tuple[UUID, datetime]] = field(default_factory=list)

    def count(self, outcome: ExtractOutcome) -> int:
        """How many sessions ended with ``outcome``."""
        return sum(1 for r in self.results if r.outcome is outcome)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "sessions": len(self.results),
            **{o.value: self.count(o) for o in ExtractOutcome},
            "input_tokens": sum(r.input_tokens for r in self.results),
            "plain_input_tokens": sum(r.plain_input_tokens or 0 for r in self.results),
            "failures": [
                {"session": str(r.session_id), "outcome": r.outcome.value, "error": r.detail}
                for r in self.results
                if r.outcome in (ExtractOutcome.FAILED, ExtractOutcome.GAVE_UP)
            ],
            "waiting": len(self.waiting),
            "next_eligible_at": min(at for _, at in self.waiting).isoformat() if self.waiting else None,
        }


@dataclass(frozen=True)
class ClaimPolicy:
    """How long a claim holds, how often a session is tried, and the backoff between tries."""

    lease: timedelta = timedelta(minutes=15)
    max_attempts: int = 3
    retry_base: timedelta = timedelta(minutes=1)


def extract(
    uow: UnitOfWork,
    extractor: Extractor,
    redactor: Redactor,
    policy: EligibilityPolicy,
    *,
    claims: ClaimPolicy = ClaimPolicy(),
    limit: int | None = None,
    workers: int = 1,
    progress: Progress = no_progress,
    retry_failed: bool = False,
) -> ExtractReport:
    """Run phase 1 over the sessions that need it (at most ``limit``), with ``workers`` threads.

    Sessions that were not eligible are assessed again first (time passes: a
    session becomes idle). Never raises for a model failure: it is recorded.
    ``retry_failed`` takes only the sessions whose extraction failed (given up
    on, or waiting for a retry), now, whatever their earlier attempts.
    """
    now = uow.clock()
    report = ExtractReport()
    if retry_failed:
        pending = failed_sessions(uow)[:limit] if limit is not None else failed_sessions(uow)
    else:
        for session_id in uow.reads().sessions_to_reassess():
            waits_until = reassess_waiting(uow.app, session_id, now, policy)
            if waits_until is not None:
                report.waiting.append((session_id, waits_until))
        pending = uow.reads().sessions_to_extract(uow.clock(), limit)
    matcher = uow.matcher()
    lock = threading.Lock()

    def one(session_id: UUID) -> None:
        result = extract_session(
            uow.app, session_id, extractor, redactor, matcher, worker=uow.workers.name(), alive=uow.workers.alive, now=uow.clock, claims=claims,
            retry_failed=retry_failed,
        )
        with lock:
            report.results.append(result)
            progress(len(report.results), len(pending), str(session_id)[:8])

    progress(0, len(pending), "")
    if workers <= 1:
        for session_id in pending:
            one(session_id)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, pending))
    return report


def failed_sessions(uow: UnitOfWork) -> list[UUID]:
    """Sessions whose extraction of their current content failed (given up on or waiting to retry), newest first."""
    return [
        s.session_id
        for s in uow.reads().session_states()
        if s.extraction_status in ("failed", "retrying") and s.mode == "enabled" and not s.pruned
    ]


def reassess_waiting(app: MnemologApp, session_id: UUID, now: datetime, policy: EligibilityPolicy) -> datetime | None:
    """Re-check a session's eligibility; when it waits only for the idle window, when that ends."""

    def command() -> datetime | None:
        session: Session | None = app.find(session_id)
        if session is None:
            return None
        eligible, reasons = assess_eligibility(session.facts, now, policy)
        if session.assess(eligible, reasons):
            app.save_all(session)
        return eligible_at(session.facts, now, policy)

    return app.retrying(command)


def reassess(app: MnemologApp, session_id: UUID, now: datetime, policy: EligibilityPolicy) -> bool:
    """Re-check a session's eligibility (recorded only when it changed); returns whether eligible."""

    def command() -> bool:
        session: Session | None = app.find(session_id)
        if session is None:
            return False
        eligible, reasons = assess_eligibility(session.facts, now, policy)
        if session.assess(eligible, reasons):
            app.save_all(session)
        return eligible

    return app.retrying(command)


def extract_session(
    app: MnemologApp,
    session_id: UUID,
    extractor: Extractor,
    redactor: Redactor,
    matcher: TombstoneMatcher,
    *,
    worker: str,
    alive: Callable[[str], bool],
    now: Callable[[], datetime],
    claims: ClaimPolicy = ClaimPolicy(),
    retry_failed: bool = False,
) -> ExtractResult:
    """Claim, extract and record one session; never raises for a model failure (``retry_failed``: despite earlier ones)."""
    session: Session | None = app.find(session_id)
    if session is None:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "unknown session")
    try:
        session.claim_extraction(worker, now(), claims.lease, claims.max_attempts, retry_failed, alive=alive)
        app.save_all(session)
    except ClaimRefused as refused:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, str(refused))
    except IntegrityError:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "claimed by another worker")
    claimed_version = session.version
    fault_points.reached("claim")

    try:
        answer = extractor.extract(transcript_without_holes(transcript_of(session)))  # cut text teaches nothing
        error: ModelError | None = None
    except ModelError as failure:
        error = failure

    # Re-read: nothing else may have touched the session since our claim.
    current: Session = app.repository.get(session_id)
    if current.version != claimed_version:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "the session changed while extracting")
    if error is not None:
        attempt = current.attempts_for_current() + 1
        give_up = not error.retryable or attempt >= claims.max_attempts
        retry_after = None if give_up else now() + claims.retry_base * (2 ** (attempt - 1))
        current.record_failure(str(error), retry_after)
        app.save_all(current)
        outcome = ExtractOutcome.GAVE_UP if give_up else ExtractOutcome.FAILED
        return ExtractResult(session_id, outcome, str(error))

    output, redactions, suppressed = scrub_output(answer.output, redactor, matcher, current.facts.scope)
    if output.is_empty:
        current.record_nothing(answer.model, answer.prompt_hash)
        outcome = ExtractOutcome.NOTHING
    else:
        current.record_extraction(
            rollout_summary=output.rollout_summary,
            rollout_slug=output.rollout_slug,
            raw_memory=output.raw_memory,
            model=answer.model,
            prompt_hash=answer.prompt_hash,
            input_tokens=answer.usage.input_tokens,
            output_tokens=answer.usage.output_tokens,
            plain_input_tokens=answer.input_tokens_plain,
            redactions=redactions,
            suppressed_by=suppressed,
        )
        outcome = ExtractOutcome.EXTRACTED
    app.save_all(current)
    for tombstone_id in suppressed:
        record_suppression(app, tombstone_id, "extraction", str(session_id))
    return ExtractResult(
        session_id,
        outcome,
        input_tokens=answer.usage.input_tokens,
        plain_input_tokens=answer.input_tokens_plain,
    )


def transcript_of(session: Session) -> Transcript:
    """Rebuild the transcript the log holds for a session (what the model is shown)."""
    f = session.facts
    meta = SessionMeta(
        source=f.source,
        native_id=f.native_id,
        path=f.path,
        cwd=f.cwd,
        git_branch=f.git_branch,
        git_remote=f.git_remote,
        agent_version=f.agent_version,
        origin=f.origin,
        interactive=f.interactive,
        started_at=f.started_at,
        updated_at=f.updated_at,
        first_user_message=f.first_user_message,
    )
    # Context items (environment, memory mnemolog served) are never new knowledge.
    items = tuple(item for item in session.transcript if item.kind is not ItemKind.CONTEXT)
    return Transcript(meta=meta, items=items, line_count=f.line_count)


def scrub_output(
    output: StageOneOutput, redactor: Redactor, matcher: TombstoneMatcher, scope: str
) -> tuple[StageOneOutput, int, tuple[UUID, ...]]:
    """A model's answer with secrets redacted and tombstoned values cut out (guarantees 1 and 5).

    A line the cut left a hole in is dropped whole (``domain.holes``): memory
    learned from it would carry the hole. Returns the clean answer, how many
    secrets were redacted and which tombstones matched.
    """
    redactions = 0
    hits: set[UUID] = set()
    fields: dict[str, str | None] = {}
    for name in ("rollout_summary", "rollout_slug", "raw_memory"):
        value = getattr(output, name)
        if value is None:
            fields[name] = None
            continue
        value, count = redactor.redact(value)
        redactions += count
        value, ids = matcher.scrub(value, scope)
        hits.update(ids)
        if name == "rollout_slug":
            fields[name] = None if has_hole(value) else value
        else:
            fields[name] = without_holes(value)
    return StageOneOutput.model_validate(fields), redactions, tuple(sorted(hits, key=str))
