"""The pipeline as the CLI runs it: ingest, extract, consolidate, render.

Each step wires adapters (readers, redaction, models, tokenizer) to a domain
use case and returns a report the CLI prints (or emits as JSON).
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from mnemolog.adapters.bootstrap import Store, unit_of_work
from mnemolog.adapters.redaction import redact, redact_transcript
from mnemolog.adapters.scope import git_remote, project_scope
from mnemolog.adapters.session_files import (
    SessionReadError,
    content_hash,
    default_session_roots,
    discover,
    read_session,
)
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.citation import Citation
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.ingest import (
    IngestOutcome,
    Pollution,
    reassess,
    record_session,
)
from mnemolog.domain.phase_one import ExtractOutcome, ExtractResult, PhaseOnePolicy, extract_session
from mnemolog.domain.phase_two import PhaseTwoPolicy, PhaseTwoResult, consolidate
from mnemolog.domain.ports import Consolidator, Extractor
from mnemolog.domain.services.retention import retire_orphans
from mnemolog.domain.session import SessionFacts, session_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.domain.transcript import Transcript, scrub_transcript
from mnemolog.projections.folder_model import without_forgotten
from mnemolog.projections.folder_writer import write_folder
from mnemolog.projections.markdown_folder import render_folder
from mnemolog.projections.reads import ViewReads
from mnemolog.projections.schema import table

Progress = Callable[[int, int, str], None]


def _no_progress(done: int, total: int, label: str) -> None:
    return None


def worker_name() -> str:
    """Who is working: host, process and thread."""
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


def matcher_for(store: Store) -> TombstoneMatcher:
    """The tombstone matcher over the active tombstones (those this process placed included)."""
    return store.matcher()


# ------------------------------------------------------------------ ingest


@dataclass
class IngestReport:
    """What one ingest run did (the --json summary)."""

    files_read: int = 0
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    lines_skipped: dict[str, int] = field(default_factory=dict)
    redactions: int = 0
    citations: int = 0
    polluted: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """True when at least one file could not be ingested."""
        return bool(self.errors)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "partial": self.partial}


def session_remote(transcript: Transcript) -> str | None:
    """The session's git remote: as recorded, else asked of its repository when that is on this machine."""
    meta = transcript.meta
    if meta.git_remote is None and meta.cwd and Path(meta.cwd).is_dir():
        # Claude Code records no remote: ask the repository, so both agents share a scope.
        return git_remote(meta.cwd)
    return meta.git_remote


def facts_for(transcript: Transcript, digest: str, redactions: int, remote: str | None) -> SessionFacts:
    """The session facts recorded at ingest (``remote`` from ``session_remote``)."""
    meta = transcript.meta
    return SessionFacts(
        source=meta.source,
        native_id=meta.native_id,
        path=meta.path,
        cwd=meta.cwd,
        scope=project_scope(remote, meta.cwd),
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


def _record_citations(store: Store, transcript: Transcript) -> int:
    count = 0
    for index, ref in enumerate(transcript.citations):
        key = f"ingest:{transcript.meta.source}:{transcript.meta.native_id}:{index}"
        if store.app.find(Citation.create_id(key=key)) is not None:
            continue
        session_ids = tuple(session_id_for("codex", rid) for rid in ref.rollout_ids)
        citation = Citation(
            item_ids=(),
            session_ids=session_ids,
            citing_session=transcript.meta.native_id,
            cited_at=ref.timestamp or transcript.meta.updated_at or store.clock(),
            source="ingest",
            entries=ref.entries,
            key=key,
        )
        store.app.save_all(citation)
        count += 1
    return count


def default_paths(env: dict[str, str] | None = None) -> list[Path]:
    """Both agents' default session folders that exist."""
    roots = default_session_roots(dict(os.environ) if env is None else env)
    return [path for _, path in roots if path.exists()]


def ingest(
    store: Store,
    paths: Sequence[Path],
    policy: EligibilityPolicy,
    progress: Progress = _no_progress,
) -> IngestReport:
    """Read, redact and record every session file under ``paths``."""
    report = IngestReport()
    files = discover(paths)
    disable_external = store.settings.disable_on_external_context
    forgotten = matcher_for(store)  # tombstoned values never enter the log again, even from a session file
    store.catch_up()
    known = {
        row["path"]: row["content_hash"]
        for row in ViewReads(store.view).query(f"SELECT path, content_hash FROM {table('sessions')} WHERE deleted = 0")
    }
    for done, found in enumerate(files, start=1):
        progress(done - 1, len(files), found.path.name)
        if found.error:
            report.errors.append({"path": str(found.path), "error": found.error})
            continue
        try:
            digest = content_hash(found.path)
            if known.get(str(found.path)) == digest:
                # Same bytes as last time: nothing to parse, redact or record.
                report.files_read += 1
                report.unchanged += 1
                continue
            transcript = read_session(found.path)
        except SessionReadError as error:
            report.errors.append({"path": str(found.path), "error": str(error)})
            continue
        report.files_read += 1
        for reason, count in transcript.skipped.items():
            report.lines_skipped[reason] = report.lines_skipped.get(reason, 0) + count
        clean, redactions = redact_transcript(transcript)
        remote = session_remote(clean)
        # Scrub in the scope the session is recorded under, so its project's tombstones apply.
        clean = scrub_transcript(clean, forgotten, project_scope(remote, clean.meta.cwd))[0]
        report.redactions += redactions
        pollution = None
        if disable_external and (clean.used_web_search or clean.used_mcp_tools):
            used = ["web search"] if clean.used_web_search else []
            used += [f"MCP tool {name}" for name in clean.used_mcp_tools]
            pollution = Pollution("used external context: " + ", ".join(used))
            report.polluted += 1
        outcome = record_session(
            store.app,
            facts_for(clean, digest, redactions, remote),
            clean.items,
            now=store.clock(),
            policy=policy,
            pollution=pollution,
        )
        setattr(report, outcome.value, getattr(report, outcome.value) + 1)
        if outcome is not IngestOutcome.UNCHANGED:
            report.citations += _record_citations(store, clean)
    progress(len(files), len(files), "")
    store.catch_up()
    if report.polluted:
        retire_orphans(unit_of_work(store))  # a polluted session's items go now, not at the next consolidation
    return report


# ------------------------------------------------------------------ extract


@dataclass
class ExtractReport:
    """What one extract run did."""

    results: list[ExtractResult] = field(default_factory=list)

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
        }


def extract(
    store: Store,
    extractor: Extractor,
    policy: EligibilityPolicy,
    *,
    limit: int | None = None,
    workers: int = 1,
    progress: Progress = _no_progress,
) -> ExtractReport:
    """Run phase 1 over the sessions that need it, with ``workers`` threads."""
    store.catch_up()
    reads = ViewReads(store.view)
    now = store.clock()
    for session_id in reads.sessions_to_reassess():
        reassess(store.app, session_id, now, policy)
    store.catch_up()
    pending = reads.sessions_to_extract(store.clock(), limit)
    matcher = matcher_for(store)
    settings = store.settings
    phase_policy = PhaseOnePolicy(
        lease=timedelta(seconds=settings.claim_lease_seconds), max_attempts=settings.max_attempts
    )
    report = ExtractReport()
    lock = threading.Lock()

    def one(session_id: Any) -> None:
        result = extract_session(
            store.app,
            session_id,
            extractor,
            worker=worker_name(),
            now=store.clock,
            scrub=redact,
            matcher=matcher,
            policy=phase_policy,
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
    store.catch_up()
    return report


# ------------------------------------------------------------------ consolidate and render


def run_consolidation(
    store: Store, consolidator: Consolidator, since: datetime | None = None, all_sessions: bool = False
) -> PhaseTwoResult:
    """Run phase 2 once. ``since`` / ``all_sessions`` widen the retention window (a first import)."""
    from mnemolog.adapters.reading import import_note_files  # reading builds on this module

    import_note_files(store, store.settings.folder)  # Codex's ad-hoc notes in the memory folder
    store.catch_up()
    settings = store.settings
    retention = timedelta(days=settings.retention_days)
    if all_sessions:
        retention = timedelta(days=365_000)
    elif since is not None:
        retention = max(retention, store.clock() - since)
    policy = PhaseTwoPolicy(retention=retention, limit=settings.max_selected)
    result = consolidate(
        store.app,
        ViewReads(store.view),
        consolidator,
        matcher_for(store),
        now=store.clock,
        worker=worker_name(),
        policy=policy,
        scrub=redact,
    )
    store.catch_up()
    return result


def render_files(store: Store, project: str | None = None) -> dict[str, str]:
    """The memory folder's files as they stand now."""
    store.catch_up()
    model = without_forgotten(ViewReads(store.view).folder_model(project), matcher_for(store))
    return render_folder(model, count_tokens)


def render(store: Store, out_dir: Path, project: str | None = None) -> dict[str, str]:
    """Render the memory folder into ``out_dir`` (swapped in whole)."""
    files = render_files(store, project)
    write_folder(files, out_dir)
    return files


def since_policy(settings: Any, since: datetime | None, all_sessions: bool) -> EligibilityPolicy:
    """The eligibility policy from settings and the --since / --all options."""
    idle = timedelta(hours=settings.idle_hours)
    if all_sessions:
        return EligibilityPolicy(idle=idle, max_age=None)
    if since is not None:
        return EligibilityPolicy(idle=idle, max_age=None, since=since)
    return EligibilityPolicy(idle=idle, max_age=timedelta(days=settings.max_age_days))
