"""Reviewing memory: a person accepts, rejects or doubts an item (its trust state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.memory_item import MemoryItem, Trust
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.services.unit_of_work import UnitOfWork


class ItemNotFound(Exception):
    """No memory item has that id."""


@dataclass(frozen=True)
class ReviewReport:
    """The verdict recorded on an item."""

    item_id: UUID
    trust: Trust
    changed: bool  # False (and no event): the item already had that trust state

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"item": str(self.item_id), "trust": self.trust.value, "changed": self.changed}


def review(
    uow: UnitOfWork, item_id: UUID, verdict: Trust, reviewer: str, note: str = "", *, project: str | None = None
) -> ReviewReport:
    """Record ``reviewer``'s verdict on an item (a ``MemoryItem.Reviewed`` event). Raises ``ItemNotFound``.

    With ``project``, an item of another project is not found (as ``show`` has it).
    """
    app = uow.app

    def command() -> bool:
        item = app.find(item_id)
        if not isinstance(item, MemoryItem) or (project is not None and item.scope not in (project, GLOBAL_SCOPE)):
            where = f" in {project} (or global)" if project is not None else ""
            raise ItemNotFound(f"no memory item {item_id}{where}")
        if item.trust == verdict:
            return False
        item.review(verdict, reviewer, note)
        app.save_all(item)
        return True

    changed: bool = app.retrying(command)
    return ReviewReport(item_id, verdict, changed)
