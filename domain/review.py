"""Reviewing memory: a person accepts, rejects or doubts an item (its trust state)."""

from __future__ import annotations

from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.memory_item import MemoryItem, Trust


class ItemNotFound(Exception):
    """No memory item has that id."""


def review_item(app: MnemologApp, item_id: UUID, verdict: Trust, reviewer: str, note: str = "") -> bool:
    """Record a verdict on an item; False (and no event) when it already has that trust state."""

    def command() -> bool:
        item: MemoryItem | None = app.find(item_id)
        if not isinstance(item, MemoryItem):
            raise ItemNotFound(f"no memory item {item_id}")
        if item.trust == verdict:
            return False
        item.review(verdict, reviewer, note)
        app.save_all(item)
        return True

    changed: bool = app.retrying(command)
    return changed
