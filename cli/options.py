"""Parsing option values shared by several commands."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from mnemolog.cli.output import UserError

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
