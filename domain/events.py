"""Base classes for typed, frozen events on the ``eventsourcing`` library.

Events are pydantic models (frozen, no extra keys), so nested value objects,
tuples and datetimes round-trip through the store with their types. The
``PydanticMapper`` turns them into stored events and back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, ClassVar, cast
from uuid import UUID

from eventsourcing.domain import Aggregate, CanInitAggregate, CanMutateAggregate
from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic
from mnemolog.domain.ports import DataKeys
from mnemolog.domain.sealing import open_state, seal_model, seal_state, sealed_paths
from pydantic import BaseModel, ConfigDict
from pydantic_core import from_json


class DomainEvent(BaseModel):
    """Fields every stored event carries: which aggregate, which version, when recorded."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    originator_id: UUID
    originator_version: int
    timestamp: datetime


class EventSourced(Aggregate):
    """Base aggregate whose events are pydantic models."""

    # Whether its events can change what memory shows (the folder, context, skills). A record of
    # what was served does not: saving one does not bring the folder and skills in step again.
    changes_memory: ClassVar[bool] = True

    class Event(DomainEvent, CanMutateAggregate[UUID]):
        """An event of this aggregate."""

    class Created(Event, CanInitAggregate[UUID]):
        """The first event of this aggregate."""

        originator_topic: str


class Value(BaseModel):
    """Base for immutable value objects carried by events."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class PydanticMapper(Mapper[UUID]):
    """Maps pydantic events to stored events (JSON) and back.

    Versioning: new fields get defaults, so older stored events still validate;
    a moved class keeps its stored name through ``register_topic`` (see topics.py).

    Sealing: with ``keys`` set, the fields an event class names in ``sealed``
    are encrypted under a data key of the event's aggregate before the state
    is encoded (see ``domain.sealing``). This is the place the library's own
    ``cipher`` hook sits, one step earlier: the library's cipher encrypts a
    whole stored state under one key for the whole application, which cannot
    forget one aggregate; a key per aggregate can. Events stored without seals
    (older ones, or a store opened without keys) read as they were written.
    """

    keys: DataKeys | None = None

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        """Serialise one domain event."""
        topic = get_topic(domain_event.__class__)
        paths = sealed_paths(domain_event.__class__)
        keys = self.keys
        if paths and keys is not None:
            subject = domain_event.originator_id
            new = domain_event.originator_version == 1  # an aggregate's first event: it has no key yet

            def encrypt(plain: bytes) -> dict[str, str]:
                return keys.seal(subject, plain, new)

            # The sealed strings read off the event and pydantic writing the JSON; the JSON form
            # walked as a dict only where a sealed path meets a value seal_model cannot read.
            sealed = seal_model(cast(BaseModel, domain_event), paths, encrypt)
            if sealed is None:
                state = seal_state(cast(BaseModel, domain_event).model_dump(mode="json"), paths, encrypt)
                sealed = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode()
            stored_state = sealed
        else:
            # pydantic writes the JSON itself (no Python dict, no json module): the same document
            # the library's JSON transcoder made of model_dump(mode="json"), at a fraction of the cost.
            stored_state = cast(BaseModel, domain_event).model_dump_json().encode()
        if self.compressor:
            stored_state = self.compressor.compress(stored_state)
        if self.cipher:
            stored_state = self.cipher.encrypt(stored_state)
        return StoredEvent(
            originator_id=domain_event.originator_id,
            originator_version=domain_event.originator_version,
            topic=topic,
            state=stored_state,
        )

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """Reconstruct one domain event."""
        stored_state = stored_event.state
        if self.cipher:
            stored_state = self.cipher.decrypt(stored_state)
        if self.compressor:
            stored_state = self.compressor.decompress(stored_state)
        cls = cast(type[BaseModel], resolve_topic(stored_event.topic))
        paths = sealed_paths(cls)
        if not paths:
            return cls.model_validate_json(stored_state)  # any JSON document, whichever wrote it
        keys = self.keys
        subject = stored_event.originator_id
        if not isinstance(subject, UUID):
            subject = UUID(str(subject))

        def decrypt(sealed: dict[str, str]) -> bytes | None:
            return keys.open(subject, sealed) if keys is not None else None

        # pydantic's JSON parser (Rust): a rebuild opens every sealed event, and json.loads cost twice as much
        event_state = open_state(from_json(stored_state), paths, decrypt)
        return cls.model_validate(event_state)
