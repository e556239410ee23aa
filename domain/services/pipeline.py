"""The pipeline: recorded sessions into memory, the one way ``run``, ``capture`` and ``eval``'s day loop take.

One run: ingest the session files under some paths; when the agent said
they ended (``capture``), assess them again without the idle window and
record the citations they carry, from the transcripts ingest read (each file
is read once); extract every session phase 1 may take; consolidate, with the
offline fallback and the notes files, and, while another process's run holds
the lease and a wait is allowed, wait for it and plan from what it wrote.
Rendering the folder is not part of it: the folder follows the log.

Each step is a function of its own, for the commands that run one phase
(``ingest``, ``extract``, ``consolidate``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Protocol
from uuid import UUID

from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.ports import (
    Consolidator,
    Extractor,
    Progress,
    Redactor,
    ScopeLookup,
    SessionSource,
    SessionUnreadable,
    no_progress,
)
from mnemolog.domain.services.cite import FileReader, cite_session_file
from mnemolog.domain.services.consolidate import (
    ConsolidationPolicy,
    ConsolidationReport,
    consolidate,
)
from mnemolog.domain.services.extract import ClaimPolicy, ExtractReport, extract, reassess
from mnemolog.domain.services.ingest import IngestReport, ingest
from mnemolog.domain.services.notes import NoteFiles
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import session_id_for
from mnemolog.domain.transcript import Transcript

RETRY_EVERY = 1.0  # seconds between phase-2 attempts while another run holds the lease


class PipelinePorts(Protocol):
    """What the pipeline reads, writes and asks (each may be built only when first asked for)."""

    @property
    def source(self) -> SessionSource:
        """The recorded session files."""
        ...

    @property
    def redactor(self) -> Redactor:
        """Cuts secrets out of what is stored or sent to a model."""
        ...

    @property
    def scopes(self) -> ScopeLookup:
        """Which project a session belongs to."""
        ...

    @property
    def extractor(self) -> Extractor:
        """The phase-1 model."""
        ...

    @property
    def consolidator(self) -> Consolidator:
        """The phase-2 model."""
        ...

    @property
    def fallback(self) -> Consolidator | None:
        """Plans a run the model's plans cannot (the offline consolidator); None when phase 2 is offline already."""
        ...

    @property
    def note_files(self) -> NoteFiles | None:
        """Codex's ad-hoc notes files, recorded before each consolidation."""
        ...

    @property
    def folder(self) -> FileReader | None:
        """The rendered folder agents read, to resolve what ended sessions cite."""
        ...

    def wait(self, seconds: float) -> None:
        """Let ``seconds`` pass, then bring the views to what other processes wrote meanwhile (the busy wait)."""
        ...


@dataclass(frozen=True)
class PipelinePolicy:
    """Which sessions each phase takes, how phase 2 selects, and whether to wait for another run."""

    eligibility: EligibilityPolicy
    consolidation: ConsolidationPolicy = field(default_factory=ConsolidationPolicy)
    claims: ClaimPolicy = field(default_factory=ClaimPolicy)
    workers: int = 1
    external_context_pollutes: bool = False
    sessions_ended: bool = False  # the agent said the sessions ended: no idle window; assessed again and cited
    busy_wait: float = 0.0  # seconds to keep trying phase 2 while another run holds the lease (0: busy at once)
    retry_every: float = RETRY_EVERY


@dataclass
class PipelineReport:
    """What one pipeline run did, phase by phase."""

    ingest: IngestReport
    extract: ExtractReport
    consolidate: ConsolidationReport
    citations: int = 0  # recorded from the ended sessions' transcripts
    waited: bool = False  # phase 2 waited for another process's run
    ended: tuple[UUID, ...] = ()  # the sessions the agent said ended (``capture``), in the order of their files


Phases = Callable[[str], AbstractContextManager[Progress]]
"""Opened around each phase ("ingest", "extract", "consolidate"); gives the phase its progress display."""


@contextmanager
def quiet(phase: str) -> Iterator[Progress]:
    """No progress shown."""
    yield no_progress


def _ignore(detail: str) -> None:
    return None


def model_name(model: Extractor | Consolidator) -> str:
    """The name a report shows for a model port (its model's name, else the port's)."""
    return str(getattr(model, "model", None) or model.name)


def run_pipeline(
    uow: UnitOfWork,
    ports: PipelinePorts,
    policy: PipelinePolicy,
    paths: Sequence[Path],
    *,
    phases: Phases = quiet,
    on_wait: Callable[[str], None] = _ignore,
) -> PipelineReport:
    """Ingest the session files under ``paths``, then extract and consolidate: everything memory needs from them.

    ``on_wait`` is told once, with the holder's detail, when phase 2 starts
    waiting for another process's run.
    """
    read: list[tuple[Path, Transcript | None]] = []
    keep = (lambda path, transcript: read.append((path, transcript))) if policy.sessions_ended else None
    with phases("ingest") as progress:
        ingested = ingest_sessions(uow, ports, policy, paths, progress, on_file=keep)
    citations, ended = close_sessions(uow, ports, policy, read) if policy.sessions_ended else (0, ())
    with phases("extract") as progress:
        extracted = extract_sessions(uow, ports, policy, progress)
    waits: list[str] = []

    def waiting(detail: str) -> None:
        waits.append(detail)
        on_wait(detail)

    with phases("consolidate"):
        consolidated = consolidate_when_free(uow, ports, policy, waiting)
    return PipelineReport(ingested, extracted, consolidated, citations, bool(waits), ended)


def _ended(policy: PipelinePolicy) -> EligibilityPolicy:
    """The eligibility of sessions the agent said ended: no idle window to wait for."""
    return replace(policy.eligibility, idle=timedelta(0)) if policy.sessions_ended else policy.eligibility


def ingest_sessions(
    uow: UnitOfWork,
    ports: PipelinePorts,
    policy: PipelinePolicy,
    paths: Sequence[Path],
    progress: Progress = no_progress,
    on_file: Callable[[Path, Transcript | None], None] | None = None,
) -> IngestReport:
    """Step 1: read, redact and record the session files under ``paths`` (``on_file``: see ``ingest``)."""
    return ingest(
        uow,
        ports.source,
        paths,
        _ended(policy),
        redactor=ports.redactor,
        scopes=ports.scopes,
        external_context_pollutes=policy.external_context_pollutes,
        progress=progress,
        on_file=on_file,
    )


def close_sessions(
    uow: UnitOfWork, ports: PipelinePorts, policy: PipelinePolicy, read: Sequence[tuple[Path, Transcript | None]]
) -> tuple[int, tuple[UUID, ...]]:
    """Step 2: sessions that ended, assessed again as ended, and their citations recorded; how many citations were new, and the sessions.

    A session seen before (e.g. by ``run`` while it was still going) waits for
    its idle window no more. The transcripts are those ingest read; a file
    ingest did not read (its bytes were unchanged) is read here, once.
    """
    ended = _ended(policy)
    cited = 0
    sessions: list[UUID] = []
    for path, transcript in read:
        if transcript is None:
            try:
                transcript = ports.redactor.redact_transcript(ports.source.read(path))[0]  # as ingest would have
            except SessionUnreadable:
                continue  # it changed since ingest hashed it; the next capture or run takes it
        meta = transcript.meta
        session_id = session_id_for(meta.source, meta.native_id)
        reassess(uow.app, session_id, uow.clock(), ended)
        cited += cite_session_file(uow, transcript, ports.folder).citations
        sessions.append(session_id)
    return cited, tuple(sessions)


def extract_sessions(
    uow: UnitOfWork,
    ports: PipelinePorts,
    policy: PipelinePolicy,
    progress: Progress = no_progress,
    *,
    limit: int | None = None,
    retry_failed: bool = False,
) -> ExtractReport:
    """Step 3: phase 1 over every session it may take now (at most ``limit``)."""
    return extract(
        uow,
        ports.extractor,
        ports.redactor,
        policy.eligibility,
        claims=policy.claims,
        limit=limit,
        workers=policy.workers,
        progress=progress,
        retry_failed=retry_failed,
    )


def consolidate_when_free(
    uow: UnitOfWork, ports: PipelinePorts, policy: PipelinePolicy, on_wait: Callable[[str], None] = _ignore
) -> ConsolidationReport:
    """Step 4: phase 2 now; while another process's run holds the lease, again every ``retry_every`` for up to ``busy_wait``.

    Two sessions that end close together are captured at once: the second
    capture's phase 2 finds the first's running. Giving up there would leave its
    session out of memory until some later consolidation; the run it waits for
    cannot take longer than the lease. Each attempt plans from what that run
    (or a ``forget`` meanwhile) wrote.
    """
    waited = 0.0
    while True:
        report = consolidate(
            uow, ports.consolidator, ports.redactor, policy.consolidation, note_files=ports.note_files, fallback=ports.fallback
        )
        if report.status != "busy" or waited >= policy.busy_wait:
            return report
        if not waited:
            on_wait(report.detail)
        ports.wait(policy.retry_every)  # and the views learn what that run wrote
        waited += policy.retry_every
