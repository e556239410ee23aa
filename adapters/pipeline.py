"""The pipeline as the CLI runs it: consolidate, render.

Each step wires adapters (models, tokenizer) to a domain use case and returns
a report the CLI prints (or emits as JSON). Ingest and extract are services
(``domain/services/ingest.py``, ``domain/services/extract.py``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from mnemolog.adapters.bootstrap import Store
from mnemolog.adapters.redaction import redact
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.phase_two import PhaseTwoPolicy, PhaseTwoResult, consolidate
from mnemolog.domain.ports import Consolidator
from mnemolog.domain.services.extract import worker_name
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.folder_model import without_forgotten
from mnemolog.projections.folder_writer import write_folder
from mnemolog.projections.markdown_folder import render_folder
from mnemolog.projections.reads import ViewReads


def matcher_for(store: Store) -> TombstoneMatcher:
    """The tombstone matcher over the active tombstones (those this process placed included)."""
    return store.matcher()


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
