"""Ingest: read, redact and record every session file under some paths.

A session file is read only when its bytes changed since it was last recorded.
Its transcript is redacted (secrets) and scrubbed (tombstoned values) before
anything is stored; the session is recorded as new, updated or unchanged, its
eligibility for phase 1 assessed, and the citations it carries recorded.

One session id in several files (Codex's ``sessions/`` and
``archived_sessions/``, a ``.jsonl`` beside its ``.jsonl.zst``) is recorded
once: the copy with the most lines wins, and on a tie the copy already
recorded stays (sessions only grow, so the longest copy is the most complete;
a copy that adds nothing is a ``duplicate`` and changes nothing).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from pathlib import Path
from typing import Any

from mnemolog.domain import fault_points
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.citation import Citation
from mnemolog.domain.eligibility import EligibilityPolicy, assess_eligibility
from mnemolog.domain.model_calls import is_model_call
from mnemolog.domain.ports import (
    Progress,
    Redactor,
    ScopeLookup,
    SessionSource,
    SessionUnreadable,
    no_progress,
)
from mnemolog.domain.services.evidence import retire_orphans
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import Session, SessionFacts, SessionMode, session_id_for
from mnemolog.domain.transcript import Transcript, scrub_transcript


class IngestOutcome(StrEnum):
    """What recording one session file did."""

    NEW = "new"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DUPLICATE = "duplicate"  # another file of the same session, with no more lines than the recorded one


@dataclass(frozen=True)
class Pollution:
    """Why a session must not feed memory (web search, MCP tools), when configured."""

    reason: str


@dataclass
class IngestReport:
    """What one ingest run did (the --json summary)."""

    files_read: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicate: int = 0
    lines_skipped: dict[str, int] = field(default_factory=dict)
    model_calls: int = 0  # session files of mnemolog's own model calls, never recorded
    lines_ignored: dict[str, int] = field(default_factory=dict)  # known non-conversation line types (no warning)
    redactions: int = 0
    citations: int = 0
    polluted: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # lines and fields left out, each naming file and line

    @property
    def partial(self) -> bool:
        """True when at least one file could not be ingested."""
        return bool(self.errors)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "partial": self.partial}

    def count(self, outcome: IngestOutcome) -> None:
        """Count one session file recorded with ``outcome``."""
        setattr(self, outcome.value, getattr(self, outcome.value) + 1)


def ingest(
    uow: UnitOfWork,
    source: SessionSource,
    paths: Sequence[Path],
    policy: EligibilityPolicy,
    *,
    redactor: Redactor,
    scopes: ScopeLookup,
    external_context_pollutes: bool = False,
    progress: Progress = no_progress,
    on_file: Callable[[Path, Transcript | None], None] | None = None,
) -> IngestReport:
    """Read, redact and record every session file under ``paths``.

    ``external_context_pollutes``: a session that used web search or MCP tools
    is marked polluted, and the items it was the only evidence of are retired.
    ``on_file`` is handed each file recorded or found unchanged, with the
    transcript read from it (redacted and scrubbed as recorded), or None when
    its bytes were unchanged and it was not read: a caller that needs the
    transcripts reads no file again.
    """
    report = IngestReport()
    files = source.discover(paths)
    reads = uow.reads()
    known = reads.known_files()
    forgotten = uow.matcher()  # tombstoned values never enter the log again, even from a session file
    for done, found in enumerate(files):
        shown = stored_path(found.path)
        progress(done, len(files), os.path.basename(shown))
        if found.error:
            error = found.error if shown in found.error else f"cannot read session file {shown}: {found.error}"
            report.errors.append(_redacted_error(redactor, shown, error))
            continue
        try:
            digest = source.content_hash(found.path)
            if known.get(shown) == digest:
                # Same bytes as last time: nothing to parse, redact or record.
                report.files_read += 1
                report.unchanged += 1
                if on_file is not None:
                    on_file(found.path, None)
                continue
            transcript = source.read(found.path)
        except SessionUnreadable as error:
            report.errors.append(_redacted_error(redactor, shown, str(error)))
            continue
        report.files_read += 1
        if is_model_call(transcript):
            report.model_calls += 1  # mnemolog's own call to an agent CLI: never memory
            continue
        for reason, count in transcript.skipped.items():
            report.lines_skipped[reason] = report.lines_skipped.get(reason, 0) + count
        for kind, count in transcript.ignored.items():
            report.lines_ignored[kind] = report.lines_ignored.get(kind, 0) + count
        transcript = in_the_past(transcript, uow.clock())
        # The scope is looked up on the real folder (its repository), then redacted like every field.
        remote = scopes.remote_of(transcript)
        scope = redactor.redact(scopes.scope_key(remote, transcript.meta.cwd))[0]
        remote = redactor.redact(remote)[0] if remote else None
        clean, redactions = redactor.redact_transcript(transcript)
        report.redactions += redactions
        # Scrubbed in the scope the session is recorded under, so its project's tombstones apply.
        clean = scrub_transcript(clean, forgotten, scope)[0]
        report.warnings.extend(clean.warnings)
        pollution = external_context(clean) if external_context_pollutes else None
        if pollution is not None:
            report.polluted += 1
        facts = facts_for(clean, digest, redactions, remote, scope)
        outcome = record_session(uow.app, facts, clean, now=uow.clock(), policy=policy, pollution=pollution)
        report.count(outcome)
        fault_points.reached("ingest")
        if on_file is not None:
            on_file(found.path, clean)
        if outcome in (IngestOutcome.NEW, IngestOutcome.UPDATED):
            report.citations += record_citations(uow, clean)
    progress(len(files), len(files), "")
    if report.polluted:
        retire_orphans(uow)  # a polluted session's items go now, not at the next consolidation
    return report


def _redacted_error(redactor: Redactor, path: str, error: str) -> dict[str, str]:
    """A file's error as reported (a secret in a file name is not printed either)."""
    return {"path": redactor.redact(path)[0], "error": redactor.redact(error)[0]}


def stored_path(path: Path) -> str:
    """The absolute path a file is recorded under, as text (bytes that are not UTF-8 become U+FFFD)."""
    return os.fsencode(os.path.abspath(path)).decode("utf-8", "replace")


CLOCK_SKEW = timedelta(minutes=5)


def in_the_past(transcript: Transcript, now: datetime) -> Transcript:
    """Timestamps later than ``now`` (a skewed clock, a bad writer) taken as ``now``, with a warning.

    A session stamped in the future would never look idle, so phase 1 would
    hold it back without a word.
    """
    meta = transcript.meta
    late = {name: value for name in ("started_at", "updated_at") if (value := getattr(meta, name)) and value > now + CLOCK_SKEW}
    if not late:
        return transcript
    note = f"{meta.path}: timestamps in the future ignored ({max(late.values()).isoformat()}): taken as now"
    late = dict.fromkeys(late, now)
    return transcript.model_copy(update={"meta": meta.model_copy(update=late), "warnings": (*transcript.warnings, note)})


def external_context(transcript: Transcript) -> Pollution | None:
    """Why a session that used web search or MCP tools must not feed memory (None when it used neither)."""
    used = ["web search"] if transcript.used_web_search else []
    used += [f"MCP tool {name}" for name in transcript.used_mcp_tools]
    return Pollution("used external context: " + ", ".join(used)) if used else None


def facts_for(transcript: Transcript, digest: str, redactions: int, remote: str | None, scope: str) -> SessionFacts:
    """The session facts recorded at ingest (``remote`` and ``scope`` from the scope lookup)."""
    meta = transcript.meta
    return SessionFacts(
        source=meta.source,
        native_id=meta.native_id,
        path=meta.path,
        cwd=meta.cwd,
        scope=scope,
        git_branch=meta.git_branch,
        git_remote=remote,
        agent_version=meta.agent_version,
        origin=meta.origin,
        interactive=meta.interactive and not meta.is_subagent,
        started_at=meta.started_at,
        updated_at=meta.updated_at,
        content_hash=digest,
        line_count=transcript.line_count,
        item_count=len(transcript.items),
        user_message_count=transcript.user_message_count,
        skipped=dict(transcript.skipped),
        redactions=redactions,
        first_user_message=meta.first_user_message,
    )


def record_session(
    app: MnemologApp,
    facts: SessionFacts,
    transcript: Transcript,
    *,
    now: datetime,
    policy: EligibilityPolicy,
    pollution: Pollution | None = None,
) -> IngestOutcome:
    """Record a session file's content; safe to run concurrently (retries on conflict)."""

    def command() -> IngestOutcome:
        session: Session | None = app.find(session_id_for(facts.source, facts.native_id))
        if session is None:
            session = Session(facts=facts, transcript=transcript.items)
            outcome = IngestOutcome.NEW
        elif session.facts.path != facts.path and facts.line_count <= session.facts.line_count:
            return IngestOutcome.DUPLICATE  # the recorded copy is as complete (see the module's rule)
        elif session.update(facts, transcript.items):
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


def record_citations(uow: UnitOfWork, transcript: Transcript) -> int:
    """Record the memory citations a transcript carries (each once); returns how many were new."""
    count = 0
    for index, ref in enumerate(transcript.citations):
        key = f"ingest:{transcript.meta.source}:{transcript.meta.native_id}:{index}"
        if uow.app.find(Citation.create_id(key=key)) is not None:
            continue
        citation = Citation(
            item_ids=(),
            session_ids=tuple(session_id_for("codex", rollout) for rollout in ref.rollout_ids),
            citing_session=transcript.meta.native_id,
            cited_at=ref.timestamp or transcript.meta.updated_at or uow.clock(),
            source="ingest",
            entries=ref.entries,
            key=key,
        )
        uow.app.save_all(citation)
        count += 1
    return count
