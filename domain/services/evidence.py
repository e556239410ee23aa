"""Retiring orphaned items: an item whose evidence is all gone leaves memory now (guarantee 2)."""

from __future__ import annotations

from uuid import UUID

from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.services.unit_of_work import UnitOfWork

ORPHANED = "all its evidence is gone (session polluted, disabled, deleted or pruned)"


def retire_orphans(uow: UnitOfWork) -> tuple[UUID, ...]:
    """Retire (by code) the items whose evidence is all in sessions that can no longer feed memory.

    Only sessions gone for good count (deleted, pruned, disabled, polluted):
    one that is merely being re-extracted keeps its items. Returns the ids retired.
    """
    reads = uow.reads()
    gone = reads.gone_session_ids()
    if not gone:
        return ()
    retired: list[MemoryItem] = []
    for orphan in sole_evidence_items(reads.active_items(), gone, None):
        item: MemoryItem | None = uow.app.find(orphan.item_id)
        if item is not None and item.retire(ORPHANED, by=EditedBy.CODE):
            retired.append(item)
    if retired:
        uow.app.save_all(*retired)
    return tuple(item.id for item in retired)
