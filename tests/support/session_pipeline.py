"""Ingest and extract as the CLI runs them: the real session files, redactor and scope lookup, the store's settings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mnemolog.adapters.store import Store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.ports import Extractor
from mnemolog.domain.services.extract import ExtractReport, extract
from mnemolog.domain.services.ingest import IngestReport, ingest

ALL = EligibilityPolicy(max_age=None)


def ingest_files(store: Store, paths: Sequence[Path], policy: EligibilityPolicy = ALL) -> IngestReport:
    """Ingest the session files under ``paths``."""
    return ingest(
        store,
        store.ports.session_source,
        paths,
        policy,
        redactor=store.ports.redactor,
        scopes=store.ports.scopes,
        external_context_pollutes=store.settings.disable_on_external_context,
    )


def extract_all(store: Store, extractor: Extractor, policy: EligibilityPolicy = ALL, **options: Any) -> ExtractReport:
    """Run phase 1 over every pending session (``options``: limit, workers)."""
    return extract(store, extractor, store.ports.redactor, policy, claims=store.ports.claims, **options)
