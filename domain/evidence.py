"""Sole-evidence retirement: an item whose evidence is all gone leaves memory (guarantee 2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar
from uuid import UUID


class Evidenced(Protocol):
    """An item with the sessions it was drawn from (a current item, an item row)."""

    @property
    def evidence(self) -> tuple[UUID, ...]: ...


ItemT = TypeVar("ItemT", bound=Evidenced)


def sole_evidence_items(items: Sequence[ItemT], gone: frozenset[UUID], live_sessions: frozenset[UUID] | None) -> list[ItemT]:
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
