"""Reading the event log itself, in order (for read models built on the fly: explain, audit, history)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from mnemolog.domain.application import MnemologApp


def log_events(app: MnemologApp, until: datetime | None = None, batch: int = 500) -> Iterator[tuple[int, Any]]:
    """(notification id, domain event) for the whole log, oldest first; up to ``until`` (inclusive) if given.

    Events are filtered by their recorded time (transaction time), not cut at the
    first later one: concurrent writers may commit slightly out of time order.
    """
    for n in app.notifications(batch):
        event: Any = app.mapper.to_domain_event(n)
        if until is not None and event.timestamp > until:
            continue
        yield n.id, event
