"""The unit of work every service runs in: the log to write, the views to read, the clock.

``adapters.store.Store`` is the real one; tests may use it over an
in-memory log. Read-your-writes is one rule: a service writes through
``app`` (each save returns the notification id it wrote) and, when it needs
to read what it wrote, asks ``reads()``, which waits for the views to reach
the last position written, once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.ports import Workers
from mnemolog.domain.reads import MemoryReads
from mnemolog.domain.tombstone_matcher import TombstoneMatcher


class UnitOfWork(Protocol):
    """One command's access to the store."""

    app: MnemologApp
    workers: Workers  # who is working, and whether a claim's holder still is (adapters.processes)

    @property
    def clock(self) -> Callable[[], datetime]:
        """The clock commands stamp their events with (read-only: a dataclass field satisfies it)."""
        ...

    def reads(self) -> MemoryReads:
        """The views, caught up with everything this process has written (read-your-writes)."""
        ...

    def keep_served(self, record: dict[str, Any]) -> None:
        """Keep a serving the log would not take now (``Injection.as_record``), for the next store session to record."""
        ...

    def kept_served(self) -> list[tuple[str, dict[str, Any]]]:
        """The servings kept by ``keep_served`` and not yet recorded: (name, record)."""
        ...

    def forget_kept(self, name: str) -> None:
        """Drop a kept serving once the log holds it."""
        ...

    def tombstone_key(self) -> bytes:
        """The key tombstone hashes are made with (kept outside the log)."""
        ...

    def matcher(self) -> TombstoneMatcher:
        """The tombstone matcher over the tombstones in force now."""
        ...
