"""Named moments a crash test stops the process at, as a power cut would (``MNEMOLOG_FAULT_AT=NAME``).

The services and the folder writer say when they reach a moment; what happens
then is not the domain's business: ``adapters.processes.arm_fault_points``
installs the hook that kills the process (SIGKILL) at the moment the fault-
injection suite named, when a store is opened. Without a hook (always,
outside that suite) reaching a moment costs one global look-up.
"""

from __future__ import annotations

from collections.abc import Callable

FAULT_VARIABLE = "MNEMOLOG_FAULT_AT"
MOMENTS = ("ingest", "claim", "lease", "staging", "aside")
"""ingest: a session recorded; claim: an extraction claim saved; lease: the consolidation lease
saved; staging: the new folder written beside the old; aside: the old folder renamed aside."""

_hook: Callable[[str], None] | None = None


def install(hook: Callable[[str], None] | None) -> None:
    """Call ``hook(name)`` at every moment reached from now on (None: nothing)."""
    global _hook
    _hook = hook


def reached(name: str) -> None:
    """The process has reached moment ``name``: the installed hook, if any, decides what happens."""
    if _hook is not None:
        _hook(name)
