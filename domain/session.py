"""The Session aggregate: one recorded agent session and what phase 1 made of it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced, Value
from mnemolog.domain.transcript import SessionText, TranscriptItem
from pydantic import Field


class SessionMode(StrEnum):
    """Whether a session may feed memory."""

    ENABLED = "enabled"
    DISABLED = "disabled"
    POLLUTED = "polluted"


SCRUBBED_FACTS = ("cwd", "git_branch", "path")
"""The facts besides the first message a forgotten value is cut out of (a value in a folder name or branch)."""


class ClaimRefused(Exception):
    """Another worker holds a live claim, or this version is already extracted."""


class SessionFacts(Value):
    """What ingest learned about a session file (no session text but the first message)."""

    source: str
    native_id: str
    path: str
    cwd: str | None = None
    scope: str
    git_branch: str | None = None
    git_remote: str | None = None
    agent_version: str | None = None
    origin: str | None = None
    interactive: bool = True
    started_at: datetime | None = None
    updated_at: datetime | None = None
    content_hash: str
    line_count: int = 0
    item_count: int = 0
    user_message_count: int = 0
    skipped: dict[str, int] = Field(default_factory=dict)
    redactions: int = 0
    first_user_message: SessionText | None = None


def session_id_for(source: str, native_id: str) -> UUID:
    """The aggregate id of a session: stable, so re-ingesting finds the same aggregate."""
    return uuid5(NAMESPACE_URL, f"mnemolog:session:{source}:{native_id}")


class Session(EventSourced):
    """One agent session. Its transcript (redacted) is kept in the log for phase 1."""

    class Recorded(EventSourced.Created):
        """A session was seen for the first time."""

        sealed: ClassVar[tuple[str, ...]] = ("facts.first_user_message", "transcript.*.text")
        facts: SessionFacts
        transcript: tuple[TranscriptItem, ...]

    class Updated(EventSourced.Event):
        """The session file changed (it grew, usually)."""

        sealed: ClassVar[tuple[str, ...]] = ("facts.first_user_message", "transcript.*.text")
        facts: SessionFacts
        transcript: tuple[TranscriptItem, ...]

        def apply(self, aggregate: Any) -> None:
            """Replace facts and transcript."""
            aggregate.facts = self.facts
            aggregate.transcript = self.transcript
            aggregate.pruned = False  # new content may feed memory again (the view agrees)

    class ModeChanged(EventSourced.Event):
        """Enabled, disabled or polluted, with why."""

        mode: SessionMode
        reason: str

        def apply(self, aggregate: Any) -> None:
            """Set the mode."""
            aggregate.mode = self.mode
            aggregate.mode_reason = self.reason

    class EligibilityAssessed(EventSourced.Event):
        """Phase 1 may (or may not) take this session; the reasons say why not."""

        eligible: bool
        reasons: tuple[str, ...] = ()

        def apply(self, aggregate: Any) -> None:
            """Set eligibility."""
            aggregate.eligible = self.eligible
            aggregate.eligibility_reasons = self.reasons

    class ExtractionClaimed(EventSourced.Event):
        """A worker took this version of the session for phase 1."""

        worker: str
        content_hash: str
        lease_until: datetime

        def apply(self, aggregate: Any) -> None:
            """Record the claim."""
            aggregate.claim = (self.worker, self.content_hash, self.lease_until)

    class Extracted(EventSourced.Event):
        """Phase 1 produced a memory for this version."""

        sealed: ClassVar[tuple[str, ...]] = ("rollout_summary", "rollout_slug", "raw_memory")
        content_hash: str
        rollout_summary: SessionText
        rollout_slug: str | None
        raw_memory: SessionText
        model: str
        prompt_hash: str
        input_tokens: int = 0
        output_tokens: int = 0
        plain_input_tokens: int | None = None
        redactions: int = 0
        suppressed_by: tuple[UUID, ...] = ()  # tombstones whose values were cut out

        def apply(self, aggregate: Any) -> None:
            """The extraction becomes current."""
            aggregate.extraction = self
            aggregate.claim = None
            aggregate.attempts = 0

    class ExtractedNothing(EventSourced.Event):
        """Phase 1 found nothing worth remembering; withdraws any earlier extraction."""

        content_hash: str
        model: str
        prompt_hash: str

        def apply(self, aggregate: Any) -> None:
            """Withdraw the extraction."""
            aggregate.extraction = None
            aggregate.nothing_hash = self.content_hash
            aggregate.claim = None
            aggregate.attempts = 0

    class ExtractionFailed(EventSourced.Event):
        """Phase 1 failed for this version; may retry after ``retry_after``."""

        sealed: ClassVar[tuple[str, ...]] = ("error",)  # a model's error may quote what it was sent
        content_hash: str
        error: str
        attempt: int
        retry_after: datetime | None  # None: gave up

        def apply(self, aggregate: Any) -> None:
            """Count the attempt and release the claim."""
            aggregate.attempts = self.attempt
            aggregate.retry_after = self.retry_after
            aggregate.failed_hash = self.content_hash
            aggregate.claim = None

    class Scrubbed(EventSourced.Event):
        """Tombstoned values were cut out of the session's stored texts (None: field unchanged)."""

        sealed: ClassVar[tuple[str, ...]] = ("first_user_message", "rollout_summary", "rollout_slug", "raw_memory", "transcript.*.1")
        tombstone_ids: tuple[UUID, ...]
        first_user_message: SessionText | None = None
        rollout_summary: SessionText | None = None
        rollout_slug: str | None = None
        raw_memory: SessionText | None = None
        transcript: tuple[tuple[int, SessionText], ...] = ()  # (index, scrubbed text) of changed items
        cwd: SessionText | None = None
        git_branch: SessionText | None = None
        path: SessionText | None = None

        def apply(self, aggregate: Any) -> None:
            """Replace the scrubbed texts."""
            facts = {
                name: getattr(self, name)
                for name in ("first_user_message", *SCRUBBED_FACTS)
                if getattr(self, name) is not None
            }
            if facts:
                aggregate.facts = aggregate.facts.model_copy(update=facts)
            if aggregate.extraction is not None:
                update = {
                    name: getattr(self, name)
                    for name in ("rollout_summary", "rollout_slug", "raw_memory")
                    if getattr(self, name) is not None
                }
                if update:
                    aggregate.extraction = aggregate.extraction.model_copy(update=update)
            if self.transcript:
                items = list(aggregate.transcript)
                for index, text in self.transcript:
                    if index < len(items):
                        items[index] = items[index].model_copy(update={"text": text})
                aggregate.transcript = tuple(items)

    class Restored(Scrubbed):
        """A lifted tombstone's cuts were undone: the texts as the log last held them (None: field unchanged)."""

    class Rerecorded(EventSourced.Event):
        """The session's current texts, recorded again under a new data key (an erase destroyed the old keys)."""

        sealed: ClassVar[tuple[str, ...]] = (
            "first_user_message", "transcript.*.text", "rollout_summary", "rollout_slug", "raw_memory"
        )
        first_user_message: SessionText | None = None
        transcript: tuple[TranscriptItem, ...] = ()
        rollout_summary: SessionText | None = None  # None: no current extraction
        rollout_slug: str | None = None
        raw_memory: SessionText | None = None

        def apply(self, aggregate: Any) -> None:
            """The texts as they stood when re-recorded."""
            aggregate.facts = aggregate.facts.model_copy(update={"first_user_message": self.first_user_message})
            aggregate.transcript = self.transcript
            if aggregate.extraction is not None:
                aggregate.extraction = aggregate.extraction.model_copy(
                    update={
                        "rollout_summary": self.rollout_summary or "",
                        "rollout_slug": self.rollout_slug,
                        "raw_memory": self.raw_memory or "",
                    }
                )

    class Pruned(EventSourced.Event):
        """Retention removed this session's extraction from memory."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        reason: str

        def apply(self, aggregate: Any) -> None:
            """Mark pruned and drop the extraction."""
            aggregate.pruned = True
            aggregate.extraction = None

    class Deleted(EventSourced.Event):
        """The session was deleted from memory (its history stays in the log)."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        reason: str

        def apply(self, aggregate: Any) -> None:
            """Mark deleted and drop the extraction."""
            aggregate.deleted = True
            aggregate.extraction = None

    @event(Recorded)
    def __init__(self, facts: SessionFacts, transcript: tuple[TranscriptItem, ...]) -> None:
        self.facts = facts
        self.transcript = transcript
        self.mode = SessionMode.ENABLED
        self.mode_reason = ""
        self.eligible: bool | None = None
        self.eligibility_reasons: tuple[str, ...] = ()
        self.claim: tuple[str, str, datetime] | None = None
        self.extraction: Session.Extracted | None = None
        self.nothing_hash: str | None = None
        self.failed_hash: str | None = None
        self.attempts = 0
        self.retry_after: datetime | None = None
        self.pruned = False
        self.deleted = False

    @classmethod
    def create_id(cls, facts: SessionFacts, transcript: tuple[TranscriptItem, ...]) -> UUID:
        """Stable id from source and native id."""
        return session_id_for(facts.source, facts.native_id)

    @property
    def content_hash(self) -> str:
        """Hash of the file content last recorded."""
        return self.facts.content_hash

    def update(self, facts: SessionFacts, transcript: tuple[TranscriptItem, ...]) -> bool:
        """Record new content; returns False (and records nothing) when the hash is unchanged."""
        if facts.content_hash == self.facts.content_hash or self.deleted:
            return False
        self.trigger_event(self.Updated, facts=facts, transcript=transcript)
        return True

    def change_mode(self, mode: SessionMode, reason: str) -> bool:
        """Change the mode; no event when it is already so."""
        if mode == self.mode:
            return False
        self.trigger_event(self.ModeChanged, mode=mode, reason=reason)
        return True

    def assess(self, eligible: bool, reasons: tuple[str, ...]) -> bool:
        """Record eligibility when it changed."""
        if self.eligible == eligible and self.eligibility_reasons == reasons:
            return False
        self.trigger_event(self.EligibilityAssessed, eligible=eligible, reasons=reasons)
        return True

    def is_extracted_current(self) -> bool:
        """True when phase 1 already answered for the current content."""
        done = {self.nothing_hash}
        if self.extraction is not None:
            done.add(self.extraction.content_hash)
        return self.content_hash in done

    def claim_extraction(
        self,
        worker: str,
        now: datetime,
        lease: timedelta,
        max_attempts: int,
        retry_failed: bool = False,
        alive: Callable[[str], bool] = lambda _: True,
    ) -> None:
        """Take this version for phase 1, or raise ``ClaimRefused``.

        ``retry_failed``: a person asked to try again (e.g. after fixing an API
        key), so earlier failures and their backoff do not refuse the claim.
        A live claim of another worker refuses, unless ``alive`` says that
        worker is gone (a crashed process): its claim is taken over at once.
        """
        if self.deleted or self.mode != SessionMode.ENABLED:
            raise ClaimRefused(f"session is {'deleted' if self.deleted else self.mode.value}")
        if self.is_extracted_current():
            raise ClaimRefused("this version is already extracted")
        if (
            self.claim is not None
            and self.claim[1] == self.content_hash
            and self.claim[2] > now
            and (self.claim[0] == worker or alive(self.claim[0]))
        ):
            raise ClaimRefused(f"claimed by {self.claim[0]} until {self.claim[2].isoformat()}")
        if self.failed_hash == self.content_hash and not retry_failed:
            if self.attempts >= max_attempts or self.retry_after is None:
                raise ClaimRefused("gave up after repeated failures")
            if self.retry_after > now:
                raise ClaimRefused(f"retry after {self.retry_after.isoformat()}")
        self.trigger_event(
            self.ExtractionClaimed, worker=worker, content_hash=self.content_hash, lease_until=now + lease
        )

    def attempts_for_current(self) -> int:
        """Failed attempts so far on the current content."""
        return self.attempts if self.failed_hash == self.content_hash else 0

    def record_extraction(self, **fields: Any) -> None:
        """Store phase 1's answer for the current content."""
        self.trigger_event(self.Extracted, content_hash=self.content_hash, **fields)

    def record_nothing(self, model: str, prompt_hash: str) -> None:
        """Phase 1 found nothing; withdraw any earlier extraction."""
        self.trigger_event(
            self.ExtractedNothing, content_hash=self.content_hash, model=model, prompt_hash=prompt_hash
        )

    def record_failure(self, error: str, retry_after: datetime | None) -> None:
        """Count a failed attempt on the current content."""
        self.trigger_event(
            self.ExtractionFailed,
            content_hash=self.content_hash,
            error=error,
            attempt=self.attempts_for_current() + 1,
            retry_after=retry_after,
        )

    def scrub(self, matcher: Any) -> bool:
        """Cut a tombstone matcher's values out of the stored texts; False when none carry one."""
        scope = self.facts.scope
        hits: set[UUID] = set()

        def cut(text: str | None) -> str | None:
            if not text:
                return None
            clean, ids = matcher.scrub(text, scope)
            hits.update(ids)
            return clean if ids else None

        fields: dict[str, Any] = {"first_user_message": cut(self.facts.first_user_message)}
        fields.update({name: cut(getattr(self.facts, name)) for name in SCRUBBED_FACTS})
        if self.extraction is not None:
            fields.update(
                rollout_summary=cut(self.extraction.rollout_summary),
                rollout_slug=cut(self.extraction.rollout_slug),
                raw_memory=cut(self.extraction.raw_memory),
            )
        changed = []
        for index, item in enumerate(self.transcript):
            clean = cut(item.text)
            if clean is not None:
                changed.append((index, clean))
        if not hits:
            return False
        self.trigger_event(self.Scrubbed, tombstone_ids=tuple(sorted(hits, key=str)), transcript=tuple(changed), **fields)
        return True

    @staticmethod
    def uncut_texts(events: Any) -> dict[str, Any]:
        """The texts as the log last recorded them before any scrub (for ``restore``), from the session's events."""
        texts: dict[str, Any] = {"first_user_message": None, "transcript": (), "extraction": None}
        for e in events:
            if isinstance(e, (Session.Recorded, Session.Updated)):
                texts["first_user_message"] = e.facts.first_user_message
                texts["transcript"] = e.transcript
            elif isinstance(e, Session.Extracted):
                texts["extraction"] = (e.rollout_summary, e.rollout_slug, e.raw_memory)
            elif isinstance(e, (Session.ExtractedNothing, Session.Pruned, Session.Deleted)):
                texts["extraction"] = None
            elif isinstance(e, Session.Rerecorded):  # an erase: what was before it is gone for good
                texts["first_user_message"] = e.first_user_message
                texts["transcript"] = e.transcript
                if e.rollout_summary is not None:
                    texts["extraction"] = (e.rollout_summary, e.rollout_slug, e.raw_memory)
        return texts

    def restore(self, uncut: dict[str, Any], matcher: Any, tombstone_id: UUID) -> bool:
        """Put back what a lifted tombstone cut: ``uncut`` (from ``uncut_texts``), cut again by the tombstones still in force.

        False when nothing changes (the text was never in the log uncut, or is
        still withheld by another tombstone).
        """
        scope = self.facts.scope

        def redo(old: str | None, current: str | None) -> str | None:
            if old is None or current is None:
                return None
            clean = str(matcher.scrub(old, scope)[0])
            return clean if clean != current else None

        fields: dict[str, Any] = {"first_user_message": redo(uncut["first_user_message"], self.facts.first_user_message)}
        if self.extraction is not None and uncut["extraction"] is not None:
            summary, slug, raw = uncut["extraction"]
            fields.update(
                rollout_summary=redo(summary, self.extraction.rollout_summary),
                rollout_slug=redo(slug, self.extraction.rollout_slug),
                raw_memory=redo(raw, self.extraction.raw_memory),
            )
        changed = []
        old_items = uncut["transcript"]
        if len(old_items) == len(self.transcript):
            for index, (old, item) in enumerate(zip(old_items, self.transcript, strict=True)):
                text = redo(old.text, item.text)
                if text is not None:
                    changed.append((index, text))
        if not changed and all(v is None for v in fields.values()):
            return False
        self.trigger_event(self.Restored, tombstone_ids=(tombstone_id,), transcript=tuple(changed), **fields)
        return True

    def rerecord(self, matcher: Any) -> None:
        """Record the current texts again, ``matcher``'s values cut out (an erase: under a new key)."""

        def cut(text: str | None) -> str | None:
            return matcher.scrub(text, None)[0] if text else text

        extraction = self.extraction
        self.trigger_event(
            self.Rerecorded,
            first_user_message=cut(self.facts.first_user_message),
            transcript=tuple(
                item.model_copy(update={"text": cut(item.text) or ""}) for item in self.transcript
            ),
            rollout_summary=cut(extraction.rollout_summary) if extraction else None,
            rollout_slug=cut(extraction.rollout_slug) if extraction else None,
            raw_memory=cut(extraction.raw_memory) if extraction else None,
        )

    def prune(self, reason: str) -> bool:
        """Retention: drop the extraction from memory."""
        if self.pruned or self.deleted:
            return False
        self.trigger_event(self.Pruned, reason=reason)
        return True

    def delete(self, reason: str) -> bool:
        """Delete from memory; history stays in the log."""
        if self.deleted:
            return False
        self.trigger_event(self.Deleted, reason=reason)
        return True
