"""The Tombstone aggregate: a forgotten value, keyed by a hash, never by the value."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.events import EventSourced


def tombstone_id_for(digest: str, scope: str) -> UUID:
    """Stable id: forgetting the same value in the same scope twice is one tombstone."""
    return uuid5(NAMESPACE_URL, f"mnemolog:tombstone:{scope}:{digest}")


class Tombstone(EventSourced):
    """Blocks a value (matched by keyed hashes of its normalised token windows)."""

    class Placed(EventSourced.Created):
        """The value is forgotten in this scope. ``digest`` is a keyed hash; ``width`` its token count."""

        digest: str
        width: int
        scope: str
        reason: str

    class Lifted(EventSourced.Event):
        """The tombstone no longer applies."""

        reason: str

        def apply(self, aggregate: Any) -> None:
            """Lift."""
            aggregate.lifted = True

    class Replaced(EventSourced.Event):
        """Placed again after a lift."""

        reason: str

        def apply(self, aggregate: Any) -> None:
            """Re-arm."""
            aggregate.lifted = False

    class Suppressed(EventSourced.Event):
        """The value was cut out or refused at an enforcement point."""

        where: str  # "extraction" | "consolidation" | "render" | "read" | "item"
        subject: str  # an id (session, item, consolidation), never the value

    @event(Placed)
    def __init__(self, digest: str, width: int, scope: str, reason: str) -> None:
        self.digest = digest
        self.width = width
        self.scope = scope
        self.reason = reason
        self.lifted = False

    @classmethod
    def create_id(cls, digest: str, width: int, scope: str, reason: str) -> UUID:
        """Stable id per (scope, digest)."""
        return tombstone_id_for(digest, scope)

    def lift(self, reason: str) -> bool:
        """Lift; no event if already lifted."""
        if self.lifted:
            return False
        self.trigger_event(self.Lifted, reason=reason)
        return True

    def replace(self, reason: str) -> bool:
        """Re-arm a lifted tombstone."""
        if not self.lifted:
            return False
        self.trigger_event(self.Replaced, reason=reason)
        return True

    def record_suppression(self, where: str, subject: str) -> None:
        """Record that the value was blocked somewhere."""
        self.trigger_event(self.Suppressed, where=where, subject=subject)


def record_suppression(app: MnemologApp, tombstone_id: UUID, where: str, subject: str) -> None:
    """Record that a tombstone blocked its value somewhere (retried on conflict)."""

    def command() -> None:
        tombstone: Tombstone = app.repository.get(tombstone_id)
        tombstone.record_suppression(where, subject)
        app.save_all(tombstone)

    app.retrying(command)
