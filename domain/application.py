"""The mnemolog Application: the event store and the commands that append to it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Mapper, Notification, Transcoder
from mnemolog.domain.events import EventSourced, PydanticMapper
from mnemolog.domain.ports import DataKeys
from mnemolog.domain.topics import register_legacy_topics

T = TypeVar("T")

APP_NAME = "mnemolog"

register_legacy_topics()


class ConflictPersisted(Exception):
    """A command kept conflicting with concurrent writers and gave up."""


class MnemologApp(Application[UUID]):
    """Holds the log. Commands live in the use-case modules and save through here."""

    name = APP_NAME
    is_snapshotting_enabled = False
    default_keys: DataKeys | None = None  # set on a subclass made by ``keyed_app_class``

    def __init__(self, env: Any = None, keys: DataKeys | None = None) -> None:
        """The log; ``keys`` (the data keys, kept outside the log) seal the text of every event."""
        self.data_keys = keys if keys is not None else self.default_keys
        super().__init__(env)
        if hasattr(self.recorder, "data_keys"):  # mnemolog's recorders store new keys before the events
            self.recorder.data_keys = self.data_keys

    def construct_mapper(self) -> Mapper[UUID]:
        """Use the pydantic mapper so typed events round-trip with their types (sealed with the data keys)."""
        mapper = self.factory.mapper(
            transcoder=self.construct_transcoder(), mapper_class=PydanticMapper
        )
        assert isinstance(mapper, PydanticMapper)
        mapper.keys = self.data_keys
        return mapper

    def construct_transcoder(self) -> Transcoder:
        """Plain JSON: pydantic already turned everything into JSON types."""
        return self.factory.transcoder()

    def find(self, aggregate_id: UUID) -> Any | None:
        """The aggregate with this id, or None."""
        try:
            return self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            return None

    last_written = 0  # the newest notification id this process wrote (what its readers wait for)
    last_changed = 0  # the newest one that can change what memory shows (the followers wait for it)

    def save_all(self, *aggregates: EventSourced) -> int | None:
        """Save the pending events of all given aggregates in one transaction; the last notification id it wrote."""
        # The library's save() checks every object against runtime-checkable protocols (slow
        # isinstance calls); these are aggregates, so their events are collected directly and put
        # through the event store's public put() (no aggregate cache, no snapshots, nothing to notify).
        events = [event for aggregate in aggregates for event in aggregate.collect_events()]
        recordings = self.events.put(events) if events else []
        if not recordings:
            return None
        position: int = recordings[-1].notification.id
        self.last_written = max(self.last_written, position)
        if any(aggregate.changes_memory for aggregate in aggregates):
            self.last_changed = max(self.last_changed, position)
        return position

    def retrying(self, command: Callable[[], T], attempts: int = 5) -> T:
        """Run a read-modify-save command again when a concurrent writer got there first.

        The command must re-read what it changes each time (that is what makes a
        retry safe): a version conflict means nothing of that save was written.
        """
        for _ in range(attempts):
            try:
                return command()
            except IntegrityError:
                continue
        raise ConflictPersisted(f"gave up after {attempts} conflicting attempts")

    def notifications(self, batch: int = 500) -> Iterator[Notification]:
        """Every stored event of the log, oldest first, read ``batch`` at a time."""
        start = 1
        while True:
            page = self.recorder.select_notifications(start=start, limit=batch)
            if not page:
                return
            yield from page
            start = page[-1].id + 1

    def max_notification_id(self) -> int:
        """The position of the newest event in the log (0 when empty)."""
        return self.recorder.max_notification_id() or 0


def keyed_app_class(keys: DataKeys | None) -> type[MnemologApp]:
    """A ``MnemologApp`` class whose instances use ``keys`` (for code that builds the app itself: the projection runner)."""
    return type("KeyedMnemologApp", (MnemologApp,), {"default_keys": keys, "name": APP_NAME})  # same name: same tables
