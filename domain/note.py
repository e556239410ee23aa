"""The Note aggregate: a user's explicit request to remember or correct something.

A note is evidence: a consolidation may cite a pending note's id for an item
of the note's scope, and the item stands while the note does. Withdrawing the
note takes that evidence away (the next run retires what rested on it alone).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced


class Note(EventSourced):
    """Append-only; the next consolidation applies it."""

    class Recorded(EventSourced.Created):
        """The request as the user made it."""

        sealed: ClassVar[tuple[str, ...]] = ("text",)
        text: str
        intent: str  # "remember" | "correct"
        scope: str
        source: str  # "cli" | "mcp" | a notes file path
        written_at: datetime

    class Applied(EventSourced.Event):
        """A consolidation took the note into account."""

        consolidation_id: UUID

        def apply(self, aggregate: Any) -> None:
            """Mark applied."""
            aggregate.applied_by = self.consolidation_id

    class Withdrawn(EventSourced.Event):
        """The user took the note back: no run applies it, and it is no longer evidence."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        reason: str

        def apply(self, aggregate: Any) -> None:
            """Mark withdrawn."""
            aggregate.withdrawn = True

    class Scrubbed(EventSourced.Event):
        """Tombstoned values were cut out of the note's text."""

        sealed: ClassVar[tuple[str, ...]] = ("text",)
        tombstone_ids: tuple[UUID, ...]
        text: str

        def apply(self, aggregate: Any) -> None:
            """Replace the text."""
            aggregate.text = self.text

    class Restored(Scrubbed):
        """A lifted tombstone's cut was undone: the text as recorded, cut by the tombstones still in force."""

    class Rerecorded(EventSourced.Event):
        """The note's current text, recorded again under a new data key (an erase destroyed the old keys)."""

        sealed: ClassVar[tuple[str, ...]] = ("text",)
        text: str

        def apply(self, aggregate: Any) -> None:
            """The text as it stood when re-recorded."""
            aggregate.text = self.text

    @event(Recorded)
    def __init__(self, text: str, intent: str, scope: str, source: str, written_at: datetime) -> None:
        self.text = text
        self.intent = intent
        self.scope = scope
        self.source = source
        self.written_at = written_at
        self.applied_by: UUID | None = None
        self.withdrawn = False

    def scrub(self, matcher: Any) -> bool:
        """Cut a tombstone matcher's values out of the text; False when it carries none."""
        clean, ids = matcher.scrub(self.text, self.scope)
        if not ids:
            return False
        self.trigger_event(self.Scrubbed, tombstone_ids=tuple(ids), text=clean)
        return True

    def restore(self, recorded: str, matcher: Any, tombstone_id: UUID) -> bool:
        """Put back what a lifted tombstone cut from the text (``recorded``: as the log last held it uncut)."""
        clean = str(matcher.scrub(recorded, self.scope)[0])
        if clean == self.text:
            return False
        self.trigger_event(self.Restored, tombstone_ids=(tombstone_id,), text=clean)
        return True

    def rerecord(self, matcher: Any) -> None:
        """Record the current text again, ``matcher``'s values cut out (an erase: under a new key)."""
        self.trigger_event(self.Rerecorded, text=matcher.scrub(self.text, None)[0])

    def mark_applied(self, consolidation_id: UUID) -> None:
        """Record that a run applied this note (a withdrawn note is never applied)."""
        if self.applied_by is None and not self.withdrawn:
            self.trigger_event(self.Applied, consolidation_id=consolidation_id)

    def withdraw(self, reason: str) -> bool:
        """Take the note back; False when it already was."""
        if self.withdrawn:
            return False
        self.trigger_event(self.Withdrawn, reason=reason)
        return True
