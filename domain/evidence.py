"""Sole-evidence retirement: an item whose evidence is all gone leaves memory (guarantee 2)."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from mnemolog.domain.reads import ItemRow


def sole_evidence_items(
    items: Sequence[ItemRow], gone: frozenset[UUID], live_sessions: frozenset[UUID] | None
) -> list[ItemRow]:
    """Items whose evidence is all among ``gone`` (or, when known, not live).

    ``live_sessions`` is the live evidence: live sessions and the notes nobody
    withdrew (a note is evidence too).
    """
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
