"""Printing for the CLI: rich on a terminal, JSON for --json, one-line errors, exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from enum import IntEnum
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

if TYPE_CHECKING:
    import typer
    from rich.console import Console


class _StreamConsole:
    """A rich Console for the current ``sys.stdout`` (or ``sys.stderr``), made on first use.

    Importing rich costs start-up time that ``--help`` and ``--json`` do not
    need. The Console is made again when the stream changes (typer's CliRunner
    swaps ``sys.stdout`` for each invocation), so it writes where the command's
    output goes and reads ``NO_COLOR`` and ``COLUMNS`` as they are then.
    """

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._stream: Any = None
        self._console: Console | None = None

    def current(self) -> Console:
        """The Console for the stream in use now."""
        stream = sys.stderr if self._stderr else sys.stdout
        if self._console is None or stream is not self._stream:
            from rich.console import Console

            if self._stderr:
                self._console = Console(file=stream, soft_wrap=True)
            else:
                # Piped output is read by scripts and logs: no wrapping, wide tables.
                piped_width = None if stream.isatty() or "COLUMNS" in os.environ else 200
                self._console = Console(file=stream, soft_wrap=True, width=piped_width)
            self._stream = stream
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.current(), name)


console = cast("Console", _StreamConsole())
errors = cast("Console", _StreamConsole(stderr=True))


class Exit(IntEnum):
    """Exit codes (documented in the README)."""

    OK = 0
    ERROR = 1  # a user error or a failure: one message on stderr
    USAGE = 2  # bad options (typer/click)
    PARTIAL = 3  # the run finished, but some inputs failed (see the report)
    BUSY = 4  # another consolidation is running, or another process kept the store locked
    NOT_FOUND = 5  # the item, run or tombstone named does not exist


class UserError(Exception):
    """A failure the user can act on; printed as one line, no traceback."""

    def __init__(self, message: str, code: Exit = Exit.ERROR) -> None:
        super().__init__(message)
        self.code = code


_DISK_FULL = (28, 122)  # ENOSPC, EDQUOT
_FULL_MESSAGES = ("database or disk is full", "no space left on device", "disk quota exceeded", "could not extend file")


def environment_failure(error: BaseException) -> str | None:
    """One line for a failure of the machine rather than of mnemolog (a full disk, a read-only folder), else None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).lower()
        if (isinstance(current, OSError) and current.errno in _DISK_FULL) or any(m in text for m in _FULL_MESSAGES) or getattr(current, "sqlstate", None) == "53100":
            return "the disk is full: free some space and run the command again (nothing was lost; the unfinished change was not recorded)"
        if (isinstance(current, OSError) and current.errno == 30) or "readonly database" in text or "read-only file system" in text:
            return f"cannot write the store or folder (read-only): {current}"
        current = current.__cause__ or current.__context__
    return None


def store_locked(error: BaseException) -> bool:
    """Whether ``error`` is SQLite giving up on a lock another process held past the time-out."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if "database is locked" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def fail(message: str, code: Exit = Exit.ERROR) -> typer.Exit:
    """Print one error line and return the exit to raise."""
    import typer  # loaded already by the command that fails; this module is imported without it (the SessionStart hook)

    errors.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(int(code))


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return str(value)


def emit_json(data: Any) -> None:
    """Write JSON to stdout (no colours, no wrapping)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=_default) + "\n")


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Any]:
    """A progress bar on a terminal; a no-op callback otherwise (or with --json)."""
    if not enabled or not console.is_terminal:
        yield lambda done, total, name: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn(f"{label} [dim]{{task.fields[name]}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=cast("_StreamConsole", console).current(),
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None, name="")

        def update(done: int, total: int, name: str) -> None:
            bar.update(task, completed=done, total=total, name=name)

        yield update


@contextmanager
def model_status(label: str, enabled: bool = True) -> Iterator[Any]:
    """A status line for a streamed model answer on a terminal (tokens, tokens/s); None otherwise."""
    if not enabled or not console.is_terminal:
        yield None
        return
    with console.status(f"{label}: waiting for the model") as status:

        def update(tokens: int, seconds: float) -> None:
            rate = tokens / seconds if seconds > 0 else 0.0
            status.update(f"{label}: {tokens} tokens from the model ({rate:.1f}/s, {seconds:.0f} s)")

        yield update


class PhaseDisplay:
    """Each pipeline phase's progress on a terminal (nothing when ``quiet``): a bar, or phase 2's streamed answer.

    Called with a phase's name, it opens that phase's display; give
    ``streamed`` to the phase-2 model as its progress.
    """

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self._status: Any = None

    def streamed(self, tokens: int, seconds: float) -> None:
        """Told how a streamed phase-2 answer advances (shown while phase 2 runs)."""
        if self._status is not None:
            self._status(tokens, seconds)

    @contextmanager
    def __call__(self, phase: str) -> Iterator[Any]:
        """The display of ``phase`` while it runs; yields its progress callback."""
        if phase != "consolidate":
            with progress_bar(phase, enabled=not self.quiet) as bar:
                yield bar
            return
        with model_status(phase, enabled=not self.quiet) as status:
            self._status = status
            try:
                yield lambda done, total, name: None
            finally:
                self._status = None
