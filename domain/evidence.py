"""Sole-evidence retirement: an item whose evidence is all gone leaves memory (guarantee 2)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from mnemolog.domain.plan_checks import CurrentItem


def sole_evidence_items(
    items: Sequence[CurrentItem], gone: frozenset[UUID], live_sessions: frozenset[UUID] | None
) -> list[CurrentItem]:
    """Items whose evidence is all among ``gone`` (or, when known, not live)."""
    out = []
    for item in items:
        if not item.evidence or not any(e in gone for e in item.evidence):
            continue
        remaining = [e for e in item.evidence if e not in gone]
        if live_sessions is not None:
            remaining = [e for e in remaining if e in live_sessions]
        if not remaining:
            out.append(item)
    return out
