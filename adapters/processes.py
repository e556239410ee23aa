"""Who is working, and whether the holder of a claim or lease still is: process names and liveness (an OS matter, kept out of domain/).

A worker's name is host, process, thread and the process's start time; a holder
on this host whose process has exited (or whose pid a later process now has) is
gone, and its claim is taken over at once. A holder on another host is presumed
alive until its lease expires.
"""

from __future__ import annotations

import os
import socket
import threading


class ProcessWorkers:
    """The ``Workers`` port over this machine's processes (Linux ``/proc`` where there is one)."""

    def name(self) -> str:
        """This thread's worker name (recorded on claims and leases)."""
        return worker_name()

    def alive(self, worker: str) -> bool:
        """Whether ``worker`` may still be working."""
        return owner_alive(worker)


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


def arm_fault_points() -> None:
    """When the fault-injection suite set ``MNEMOLOG_FAULT_AT=NAME``: die (SIGKILL, no clean-up) on reaching NAME."""
    from mnemolog.domain import fault_points

    wanted = os.environ.get(fault_points.FAULT_VARIABLE)
    if not wanted:
        return

    def kill(name: str) -> None:
        if name == wanted:
            import signal

            os.kill(os.getpid(), signal.SIGKILL)

    fault_points.install(kill)
