"""Named moments a crash test stops the process at, as a power cut would (``MNEMOLOG_FAULT_AT=NAME``).

The fault-injection suite sets the variable to kill a real ``mnemolog``
process exactly when a claim, a lease or a staging folder exists, then
checks that the next run recovers. Unset (always, outside that suite) it
costs one dictionary look-up.
"""

from __future__ import annotations

import os
import signal

FAULT_VARIABLE = "MNEMOLOG_FAULT_AT"
MOMENTS = ("ingest", "claim", "lease", "staging", "aside")
"""ingest: a session recorded; claim: an extraction claim saved; lease: the consolidation lease
saved; staging: the new folder written beside the old; aside: the old folder renamed aside."""


def reached(name: str) -> None:
    """Kill this process (SIGKILL, no clean-up) when the suite asked to stop at ``name``."""
    if os.environ.get(FAULT_VARIABLE) == name:
        os.kill(os.getpid(), signal.SIGKILL)
