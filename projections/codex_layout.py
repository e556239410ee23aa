"""Codex's naming rules for the memory folder: rollout summary stems and timestamps.

The stem rule follows Codex (``rollout_summary_file_stem_from_parts`` in
codex-rs, see ``reference/codex-formats.md``)::

    <UUIDv7 time, UTC, YYYY-MM-DDTHH-MM-SS>-<4 base-62 digits>[-<slug>]

The four digits are the UUID's low 32 bits modulo 62^4, alphabet
``0-9a-zA-Z``, most significant first. The slug keeps ASCII alphanumerics
(lowercased), turns every other character into ``_``, stops at 60
characters and drops trailing ``_``; an empty slug adds nothing.

mnemolog's extension for ids that are not UUIDv7 (Claude Code session ids are
UUIDv4; some ids are not UUIDs at all): the timestamp comes from
``fallback_time`` (the session start), and the hash seed is the low 32 bits of
the UUID when the id parses as one, else the low 32 bits of ``sha256(id)``.
Codex itself falls back to the source's updated time and, for non-UUID ids, a
``*31`` string hash; those ids never occur in a Codex install.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta

SHORT_HASH_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
SHORT_HASH_SPACE = 62**4  # 14,776,336
SLUG_MAX_LEN = 60
STEM_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _as_utc(moment: datetime) -> datetime:
    """A timezone-aware UTC datetime; naive datetimes are taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def uuid7_time(thread_id: str) -> datetime | None:
    """The embedded millisecond timestamp of a UUIDv7 id, in UTC; None for anything else."""
    try:
        parsed = uuid.UUID(thread_id)
    except ValueError:
        return None
    if parsed.version != 7:
        return None
    millis = parsed.int >> 80
    return _EPOCH + timedelta(milliseconds=millis)


def short_hash(seed: int) -> str:
    """Four base-62 digits (most significant first) of ``seed mod 62^4``."""
    value = seed % SHORT_HASH_SPACE
    digits = []
    for _ in range(4):
        value, index = divmod(value, 62)
        digits.append(SHORT_HASH_ALPHABET[index])
    return "".join(reversed(digits))


def _hash_seed(thread_id: str) -> int:
    """Low 32 bits of the UUID, or (mnemolog's extension) of sha256(id) for non-UUIDs."""
    try:
        return uuid.UUID(thread_id).int & 0xFFFF_FFFF
    except ValueError:
        digest = hashlib.sha256(thread_id.encode("utf-8")).digest()
        return int.from_bytes(digest, "big") & 0xFFFF_FFFF


def sanitize_slug(raw_slug: str) -> str:
    """Codex's slug rule: ASCII alnum lowercased, others ``_``, ≤ 60 chars, no trailing ``_``."""
    chars = [ch.lower() if ch.isascii() and ch.isalnum() else "_" for ch in raw_slug[:SLUG_MAX_LEN]]
    return "".join(chars).rstrip("_")


def rollout_summary_stem(
    thread_id: str, slug: str | None, fallback_time: datetime | None = None
) -> str:
    """The file stem (no ``.md``) of a session's file under ``rollout_summaries/``.

    ``thread_id`` is the agent's native id. For UUIDv7 ids the timestamp is the
    id's own; otherwise ``fallback_time`` (the session start) is used and must be
    given, else ``ValueError``. See the module docstring for the full rule.
    """
    moment = uuid7_time(thread_id)
    if moment is None:
        if fallback_time is None:
            raise ValueError(
                f"thread id {thread_id!r} is not a UUIDv7: a fallback_time is needed for its stem"
            )
        moment = _as_utc(fallback_time)
    prefix = f"{moment.strftime(STEM_TIME_FORMAT)}-{short_hash(_hash_seed(thread_id))}"
    if slug is None:
        return prefix
    clean = sanitize_slug(slug)
    return f"{prefix}-{clean}" if clean else prefix


def rfc3339_utc(moment: datetime) -> str:
    """RFC 3339 in UTC with ``+00:00``, fractional seconds as chrono's ``to_rfc3339`` prints them.

    Whole seconds print none, whole milliseconds three digits, otherwise six.
    Naive datetimes are taken to be UTC.
    """
    utc = _as_utc(moment)
    base = utc.strftime("%Y-%m-%dT%H:%M:%S")
    micros = utc.microsecond
    if micros == 0:
        fraction = ""
    elif micros % 1000 == 0:
        fraction = f".{micros // 1000:03d}"
    else:
        fraction = f".{micros:06d}"
    return f"{base}{fraction}+00:00"
