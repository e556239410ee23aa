"""Phase 1: claim a session version, ask a model, store what it answered.

Claims hold across processes: a claim is an event on the session, so two
workers that claim the same version conflict on its version number and only
one wins. A crashed worker's claim expires after its lease.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.ports import Extractor, ModelError
from mnemolog.domain.session import ClaimRefused, Session
from mnemolog.domain.tombstone import record_suppression
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.domain.transcript import SessionMeta, Transcript

Scrub = Callable[[str], tuple[str, int]]


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


@dataclass(frozen=True)
class PhaseOnePolicy:
    """Lease, retry cap and backoff for phase 1."""

    lease: timedelta = timedelta(minutes=15)
    max_attempts: int = 3
    retry_base: timedelta = timedelta(minutes=1)


def transcript_of(session: Session) -> Transcript:
    """Rebuild the transcript the log holds for a session."""
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
    return Transcript(meta=meta, items=session.transcript, line_count=f.line_count)


def _scrub_output(
    output: StageOneOutput, scrub: Scrub, matcher: TombstoneMatcher, scope: str
) -> tuple[StageOneOutput, int, tuple[UUID, ...]]:
    redactions = 0
    hits: set[UUID] = set()
    fields: dict[str, str | None] = {}
    for name in ("rollout_summary", "rollout_slug", "raw_memory"):
        value = getattr(output, name)
        if value is None:
            fields[name] = None
            continue
        value, count = scrub(value)
        redactions += count
        value, ids = matcher.scrub(value, scope)
        hits.update(ids)
        fields[name] = value
    return StageOneOutput.model_validate(fields), redactions, tuple(sorted(hits, key=str))


def extract_session(
    app: MnemologApp,
    session_id: UUID,
    extractor: Extractor,
    *,
    worker: str,
    now: Callable[[], datetime],
    scrub: Scrub,
    matcher: TombstoneMatcher,
    policy: PhaseOnePolicy = PhaseOnePolicy(),
) -> ExtractResult:
    """Claim, extract and record one session; never raises for a model failure."""
    session: Session | None = app.find(session_id)
    if session is None:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "unknown session")
    try:
        session.claim_extraction(worker, now(), policy.lease, policy.max_attempts)
        app.save_all(session)
    except ClaimRefused as refused:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, str(refused))
    except IntegrityError:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "claimed by another worker")
    claimed_version = session.version

    try:
        answer = extractor.extract(transcript_of(session))
        error: ModelError | None = None
    except ModelError as failure:
        error = failure

    # Re-read: nothing else may have touched the session since our claim.
    current: Session = app.repository.get(session_id)
    if current.version != claimed_version:
        return ExtractResult(session_id, ExtractOutcome.SKIPPED, "the session changed while extracting")
    if error is not None:
        attempt = current.attempts_for_current() + 1
        give_up = not error.retryable or attempt >= policy.max_attempts
        retry_after = None if give_up else now() + policy.retry_base * (2 ** (attempt - 1))
        current.record_failure(str(error), retry_after)
        app.save_all(current)
        outcome = ExtractOutcome.GAVE_UP if give_up else ExtractOutcome.FAILED
        return ExtractResult(session_id, outcome, str(error))

    output, redactions, suppressed = _scrub_output(answer.output, scrub, matcher, current.facts.scope)
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
