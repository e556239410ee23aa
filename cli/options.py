"""Parsing option values shared by several commands."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import typer

# The commands call options.project_of; it lives in cli.command_store, which the SessionStart hook imports without typer.
from mnemolog.cli.command_store import project_of as project_of
from mnemolog.cli.output import Exit, UserError

CWD = typer.Option(None, "--cwd", help="The working folder whose project is read (default: the current folder).")
PROJECT = typer.Option(
    None, "--project", help="A project scope key instead of --cwd (git:host/owner/repo or path:/dir, as doctor and search print)."
)


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(value: str | None, now: datetime) -> datetime | None:
    """A DATE (2026-01-31, or a full ISO time) or a DURATION back from now (30d, 12h, 2w)."""
    if value is None:
        return None
    text = value.strip()
    match = _DURATION.match(text)
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
    return parse_time(text)


def parse_time(text: str) -> datetime:
    """An ISO date or time; naive values are taken as UTC."""
    try:
        parsed = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as error:
        raise UserError(f"not a date, time or duration: {text!r} (try 2026-01-31, 2026-01-31T12:00Z or 30d)") from error
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def resolve_id(reads: Any, what: str, reference: str, project: str | None = None) -> UUID:
    """The id ``reference`` names (a whole id, ``[item:<id>]`` or a unique prefix), or a one-line error.

    ``what`` is items, sessions, notes, tombstones or runs; with ``project``
    another project's item or tombstone is not found. Unknown: exit 5;
    ambiguous: exit 2 with the candidates.
    """
    from mnemolog.domain.ids import AmbiguousId, UnknownId
    from mnemolog.domain.ids import resolve_id as resolve
    from rich.markup import escape

    try:
        return resolve(reads, what, reference, project)
    except AmbiguousId as error:
        raise UserError(f"{escape(str(error))} (give more characters)", Exit.USAGE) from error
    except UnknownId as error:
        where = f" in {project} (or global)" if project is not None and what in ("items", "tombstones") else ""
        raise UserError(escape(str(error)) + where, Exit.NOT_FOUND) from error
