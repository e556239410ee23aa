"""The Injection aggregate: what memory was served to a session, and why (guarantee 8).

Every read an agent makes of memory (the ``SessionStart`` hook, ``context``,
each MCP read tool) records one event: which session asked (when the agent
said), for which project, the items served in their order with the reasons
they ranked there, and how many tokens it took. It holds ids and reasons,
never item text, so it needs no sealing and costs one small append.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced, Value


class ServedItem(Value):
    """One item as it was served: its place, and what put it there."""

    item_id: UUID
    rank: int  # 1 = first
    trust: str  # accepted | proposed | doubted | rejected
    citations: int  # times cited before (usage rank)
    updated_at: datetime | None  # recency
    score: float | None = None  # a search's relevance
    why: str = ""  # the reasons in words: "accepted; cited 3x; updated 2026-11-01"


class Injection(EventSourced):
    """One serving of memory to a session."""

    changes_memory = False  # a record of serving: the folder shows nothing of it

    class Served(EventSourced.Created):
        """Memory was served."""

        session: str | None  # the agent's own session id, when it gave one
        project: str
        surface: str  # hook | context | mcp:get_memory_context | mcp:search_memory | mcp:read_memory_item | mcp:read_memory_file
        items: tuple[ServedItem, ...]
        tokens: int
        served_at: datetime
        excerpts: tuple[str, ...] = ()  # history excerpts served, by reference (history:<session>:<n>), in order

    @event(Served)
    def __init__(
        self,
        session: str | None,
        project: str,
        surface: str,
        items: tuple[ServedItem, ...],
        tokens: int,
        served_at: datetime,
        excerpts: tuple[str, ...] = (),
    ) -> None:
        self.session = session
        self.project = project
        self.surface = surface
        self.items = items
        self.tokens = tokens
        self.served_at = served_at
        self.excerpts = excerpts

    def as_record(self) -> dict[str, Any]:
        """This serving as plain JSON values (``recreate`` makes it again, under the same id)."""
        return {
            "id": str(self.id),
            "session": self.session,
            "project": self.project,
            "surface": self.surface,
            "items": [item.model_dump(mode="json") for item in self.items],
            "tokens": self.tokens,
            "served_at": self.served_at.isoformat(),
            "excerpts": list(self.excerpts),
        }

    @classmethod
    def recreate(cls, record: dict[str, Any]) -> Injection:
        """The serving ``as_record`` gave, under its id: saved twice, the second save is refused (recorded once)."""
        return cls._create(
            cls.Served,
            id=UUID(record["id"]),
            session=record["session"],
            project=record["project"],
            surface=record["surface"],
            items=tuple(ServedItem.model_validate(item) for item in record["items"]),
            tokens=int(record["tokens"]),
            served_at=datetime.fromisoformat(record["served_at"]),
            excerpts=tuple(str(ref) for ref in record.get("excerpts", ())),
        )
