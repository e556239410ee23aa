"""Consolidating and rendering a test store the way ``mnemolog consolidate`` and ``render`` do."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from mnemolog.adapters.folder_writer import write_folder
from mnemolog.adapters.redaction import SecretRedactor
from mnemolog.adapters.store import Store
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.ports import Consolidator
from mnemolog.domain.services.consolidate import (
    ConsolidationPolicy,
    ConsolidationReport,
    consolidate,
)
from mnemolog.projections.rendered_folder import folder_files


def run_consolidation(
    store: Store, consolidator: Consolidator, since: datetime | None = None, all_sessions: bool = False
) -> ConsolidationReport:
    """One consolidation with the store's settings; ``since`` / ``all_sessions`` as ``--since`` / ``--all``."""
    policy = ConsolidationPolicy.window(
        store.settings.retention_days, store.settings.max_selected, store.clock(), since, all_sessions
    )
    return consolidate(store, consolidator, SecretRedactor(), policy)


def rendered(store: Store, project: str | None = None) -> dict[str, str]:
    """The memory folder's files as they stand now (None: the shared folder)."""
    return folder_files(store.reads(), store.matcher(), count_tokens, project)


def render_into(store: Store, out: Path, project: str | None = None) -> dict[str, str]:
    """Render the folder into ``out`` (swapped in whole), as ``mnemolog render`` does."""
    files = rendered(store, project)
    write_folder(files, out)
    return files
