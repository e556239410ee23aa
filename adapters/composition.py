"""The composition root: every port the services are given, built from the settings once.

``Ports(settings)`` builds nothing up front: each port is made (and its
modules imported) the first time it is asked for, then kept. A SessionStart
hook that asks for the instructions loads no session reader, model client or
redactor. Entrypoints ask a store's ``ports`` (``Store.ports``) and never
build a port by hand.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolog.adapters.models import StreamProgress
    from mnemolog.adapters.note_files import NoteFolder
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import Store
    from mnemolog.adapters.tokens import CachedTokenizer
    from mnemolog.domain.eligibility import EligibilityPolicy
    from mnemolog.domain.ports import Consolidator, Extractor, Redactor, ScopeLookup, SessionSource
    from mnemolog.domain.services.cite import FileReader
    from mnemolog.domain.services.consolidate import ConsolidationPolicy
    from mnemolog.domain.services.extract import ClaimPolicy
    from mnemolog.domain.services.notes import NoteFiles
    from mnemolog.domain.services.pipeline import PipelinePolicy


class Ports:
    """The ports and policies of one store's settings, each built on first use and kept."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._extractors: dict[str | None, Extractor] = {}

    # ------------------------------------------------------------------ sessions, redaction, scopes

    @cached_property
    def session_source(self) -> SessionSource:
        """Recorded sessions on disk (Codex and Claude Code files), read within the configured limits."""
        from mnemolog.adapters.session_files import ReadLimits, SessionFiles

        s = self.settings
        return SessionFiles(ReadLimits(s.max_line_bytes, s.max_file_bytes, s.max_nesting))

    @cached_property
    def redactor(self) -> Redactor:
        """The secret redactor (Codex's patterns plus detect-secrets' rules)."""
        from mnemolog.adapters.redaction import SecretRedactor

        return SecretRedactor()

    @cached_property
    def scopes(self) -> ScopeLookup:
        """Project scopes from git remotes and working folders."""
        from mnemolog.adapters.scope import GitScopes

        return GitScopes()

    # ------------------------------------------------------------------ the memory folder and the read path

    @cached_property
    def note_folder(self) -> NoteFolder:
        """Codex's ad-hoc notes files in the memory folder (``extensions/ad_hoc/notes/*.md``)."""
        from mnemolog.adapters.note_files import NoteFolder

        return NoteFolder(self.settings.folder)

    def note_folder_at(self, folder: Path | None) -> NoteFiles:
        """The notes files of ``folder`` (``note --import-files --folder``), else of the configured memory folder."""
        from mnemolog.adapters.note_files import NoteFolder

        return self.note_folder if folder is None else NoteFolder(folder)

    @property
    def folder_reader(self) -> FileReader | None:
        """The rendered memory folder agents read, for citations naming its lines (None before the first render)."""
        from mnemolog.adapters.folder_reader import disk_folder_reader

        folder = self.settings.folder
        return disk_folder_reader(folder) if folder.is_dir() else None

    @cached_property
    def tokenizer(self) -> CachedTokenizer:
        """The o200k tokenizer, its counts of repeated texts remembered in the home folder."""
        from mnemolog.adapters.store_files import TOKEN_COUNTS
        from mnemolog.adapters.tokens import CachedTokenizer

        return CachedTokenizer(self.settings.home / TOKEN_COUNTS)

    def instructions(self, project: str, agent: str | None = None) -> str:
        """The read-path instructions for ``project``: the full prompt, or the SessionStart hook's for ``agent``."""
        from mnemolog.adapters.agent_context import hook_instructions, instructions

        return instructions(project) if agent is None else hook_instructions(project, agent)

    # ------------------------------------------------------------------ policies

    def eligibility(self, since: datetime | None = None, all_: bool = False) -> EligibilityPolicy:
        """Which sessions phase 1 may take: the configured idle time and age window, or ``--since`` / ``--all``."""
        from mnemolog.adapters.settings import eligibility_policy

        return eligibility_policy(self.settings, since, all_)

    @cached_property
    def claims(self) -> ClaimPolicy:
        """How long a phase-1 claim holds and how often a session is tried."""
        from mnemolog.adapters.settings import claim_policy

        return claim_policy(self.settings)

    def consolidation_policy(self, since: datetime | None = None, all_: bool = False, *, now: datetime) -> ConsolidationPolicy:
        """Phase 2's selection window and size (``--since`` / ``--all`` widen it) and its lease, as configured."""
        from dataclasses import replace

        from mnemolog.domain.services.consolidate import ConsolidationPolicy

        s = self.settings
        policy = ConsolidationPolicy.window(s.retention_days, s.max_selected, now, since, all_)
        return replace(policy, lease=timedelta(seconds=s.consolidate_lease_seconds))

    def workers(self, n: int | None = None) -> int:
        """Phase-1 workers: ``n`` when given, else as configured (capped for a local model server)."""
        from mnemolog.adapters.models import extract_workers

        return extract_workers(self.settings, n)

    # ------------------------------------------------------------------ models

    def extractor(self, model: str | None = None) -> Extractor:
        """The phase-1 model (``model``: a name, or 'heuristic'; default as configured)."""
        if model not in self._extractors:
            from mnemolog.adapters.models import make_extractor

            self._extractors[model] = make_extractor(self.settings, model)
        return self._extractors[model]

    def consolidator(self, model: str | None = None, progress: StreamProgress | None = None) -> Consolidator:
        """The phase-2 model; ``progress`` is told how a streamed answer advances."""
        from mnemolog.adapters.models import make_consolidator

        return make_consolidator(self.settings, model, progress=progress)

    def fallback(self, model: str | None = None) -> Consolidator | None:
        """The offline consolidator when phase 2 uses a language model (it plans a run the model's plans cannot)."""
        from mnemolog.adapters.models import fallback_consolidator

        return fallback_consolidator(self.settings, model)

    # ------------------------------------------------------------------ the pipeline

    def pipeline(
        self, model: str | None = None, progress: StreamProgress | None = None, *, cite: bool = False, store: Store | None = None
    ) -> PipelineWiring:
        """The pipeline service's ports: session files, redaction, scopes, both models and the fallback, the notes files.

        Each is built when the pipeline first asks for it (``ingest`` builds no
        model). ``cite``: the rendered folder too, to resolve what ended
        sessions cite (capture). ``store``: the store the pipeline runs in,
        whose views a busy wait brings up to what other processes wrote.
        """
        return PipelineWiring(self, model, progress, cite, store)

    def pipeline_policy(
        self,
        since: datetime | None = None,
        all_: bool = False,
        *,
        now: datetime,
        workers: int | None = None,
        sessions_ended: bool = False,
        wait_while_busy: bool = False,
    ) -> PipelinePolicy:
        """The pipeline's policies from the settings.

        ``sessions_ended``: the agent said the sessions ended (capture): no idle
        window for them. ``wait_while_busy``: while another run holds phase 2's
        lease, wait for it (at most the lease) instead of reporting busy.
        """
        from mnemolog.domain.services.pipeline import PipelinePolicy

        return PipelinePolicy(
            eligibility=self.eligibility(since, all_),
            consolidation=self.consolidation_policy(since, all_, now=now),
            claims=self.claims,
            workers=self.workers(workers),
            external_context_pollutes=self.settings.disable_on_external_context,
            sessions_ended=sessions_ended,
            busy_wait=self.settings.consolidate_lease_seconds if wait_while_busy else 0.0,
        )



class PipelineWiring:
    """The pipeline's ports (``domain.services.pipeline.PipelinePorts``) from one store's ``Ports``, each built on first use."""

    def __init__(self, ports: Ports, model: str | None, progress: StreamProgress | None, cite: bool, store: Store | None) -> None:
        self._ports, self._model, self._progress, self._cite, self._store = ports, model, progress, cite, store

    @property
    def source(self) -> SessionSource:
        """The session files, read within the configured limits."""
        return self._ports.session_source

    @property
    def redactor(self) -> Redactor:
        """The secret redactor."""
        return self._ports.redactor

    @property
    def scopes(self) -> ScopeLookup:
        """The project scope lookup."""
        return self._ports.scopes

    @cached_property
    def extractor(self) -> Extractor:
        """The phase-1 model."""
        return self._ports.extractor(self._model)

    @cached_property
    def consolidator(self) -> Consolidator:
        """The phase-2 model."""
        return self._ports.consolidator(self._model, self._progress)

    @cached_property
    def fallback(self) -> Consolidator | None:
        """The offline consolidator, when phase 2 uses a language model."""
        return self._ports.fallback(self._model)

    @property
    def note_files(self) -> NoteFiles:
        """Codex's ad-hoc notes files in the memory folder."""
        return self._ports.note_folder

    @cached_property
    def folder(self) -> FileReader | None:
        """The rendered folder, when asked to cite (else None)."""
        return self._ports.folder_reader if self._cite else None

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, then bring the store's views to the end of the log."""
        import time

        time.sleep(seconds)
        if self._store is not None:
            self._store.catch_up()  # what the run waited for (or a forget meanwhile) wrote: the next attempt plans from it
