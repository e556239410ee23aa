"""The read path as tests call it: each read of ``domain.services.read`` bound to a store's views and matcher."""

from __future__ import annotations

from mnemolog.adapters.agent_context import context_for, memory_folder
from mnemolog.adapters.store import Store
from mnemolog.domain.reads import SearchHit
from mnemolog.domain.services import read

__all__ = ["context_for", "memory_folder", "search", "search_ids", "show"]


def search(store: Store, query: str, project: str, kind: str | None = None, limit: int = 20) -> list[SearchHit]:
    """``mnemolog search`` for ``project``."""
    return read.search(store.reads(), store.matcher(), query, project, kind, limit)


def search_ids(store: Store, query: str, project: str, kind: str | None = None, limit: int = 20) -> list[str]:
    """The ids (as strings) of the hits, best first."""
    return [str(hit.item.item_id) for hit in search(store, query, project, kind, limit)]


def show(store: Store, reference: str, project: str) -> read.ShownItem | None:
    """``mnemolog show`` for ``project``."""
    return read.show(store.reads(), store.matcher(), reference, project)
