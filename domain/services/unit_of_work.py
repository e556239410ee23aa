"""The unit of work every service runs in: the log to write, the views to read, the clock.

``adapters.bootstrap.Store`` is the real one; tests may use it over an
in-memory log. Read-your-writes is one rule: a service writes through
``app`` (each save returns the notification id it wrote) and, when it needs
to read what it wrote, asks ``reads()``, which waits for the views to reach
the last position written, once.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.reads import MemoryReads
from mnemolog.domain.tombstone_matcher import TombstoneMatcher


class UnitOfWork(Protocol):
    """One command's access to the store."""

    app: MnemologApp

    @property
    def clock(self) -> Callable[[], datetime]:
        """The clock commands stamp their events with (read-only: a dataclass field satisfies it)."""
        ...

    def reads(self) -> MemoryReads:
        """The views, caught up with everything this process has written (read-your-writes)."""
        ...

    def tombstone_key(self) -> bytes:
        """The key tombstone hashes are made with (kept outside the log)."""
        ...

    def matcher(self) -> TombstoneMatcher:
        """The tombstone matcher over the tombstones in force now."""
        ...


def worker_name() -> str:
    """Who is working: host, process, thread and the process's start time (recorded on claims and leases).

    The start time tells a process apart from a later one that got the same pid.
    """
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{_started(os.getpid()) or 0}"


def _started(pid: int) -> int | None:
    """A process's start time in clock ticks since boot (Linux ``/proc``), None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the name in parentheses may hold spaces
    try:
        return None if fields[0] == "Z" else int(fields[19])  # a zombie has ended
    except (IndexError, ValueError):
        return None


def owner_alive(worker: str) -> bool:
    """Whether the worker that holds a claim or lease may still be working.

    False only when it is certain the holder is gone: it ran on this host and
    its process has exited (or the pid now belongs to a later process). A
    holder on another host is presumed alive until its lease expires.
    """
    parts = worker.split(":")
    if len(parts) < 2 or parts[0] != socket.gethostname():
        return True
    try:
        pid = int(parts[1])
    except ValueError:
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    except OSError:
        return True
    started = _started(pid)
    if started is None:
        return os.path.exists(f"/proc/{pid}") or not os.path.isdir("/proc")  # a zombie reads as gone
    recorded = parts[3] if len(parts) > 3 else "0"
    return recorded in ("0", str(started))
