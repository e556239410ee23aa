"""The Citation aggregate: an agent used memory."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid4, uuid5

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced


class Citation(EventSourced):
    """Which items and sessions an agent cited, from where, when."""

    class Recorded(EventSourced.Created):
        """The citation as read."""

        sealed: ClassVar[tuple[str, ...]] = ("entries.*",)
        item_ids: tuple[UUID, ...]
        session_ids: tuple[UUID, ...]
        citing_session: str | None
        cited_at: datetime
        source: str  # "cli" | "ingest" | "mcp"
        entries: tuple[str, ...] = ()
        key: str | None = None  # set when the same citation may be read twice (ingest)

    class Rerecorded(EventSourced.Event):
        """The citation's entries, recorded again under a new data key (an erase destroyed the old keys)."""

        sealed: ClassVar[tuple[str, ...]] = ("entries.*",)
        entries: tuple[str, ...]

        def apply(self, aggregate: Any) -> None:
            """The entries as they stood when re-recorded."""
            aggregate.entries = self.entries

    @event(Recorded)
    def __init__(
        self,
        item_ids: tuple[UUID, ...],
        session_ids: tuple[UUID, ...],
        citing_session: str | None,
        cited_at: datetime,
        source: str,
        entries: tuple[str, ...] = (),
        key: str | None = None,
    ) -> None:
        self.item_ids = item_ids
        self.session_ids = session_ids
        self.citing_session = citing_session
        self.cited_at = cited_at
        self.source = source
        self.entries = entries

    @classmethod
    def create_id(cls, *args: object, key: str | None = None, **kwargs: object) -> UUID:
        """A stable id for keyed citations (so re-reading a session records it once)."""
        return uuid5(NAMESPACE_URL, f"mnemolog:citation:{key}") if key else uuid4()

    def rerecord(self, matcher: Any) -> None:
        """Record the entries again, ``matcher``'s values cut out (an erase: under a new key)."""
        self.trigger_event(self.Rerecorded, entries=tuple(matcher.scrub(e, None)[0] for e in self.entries))
