"""Parse the memory citations an agent prints after it used memory.

Codex agents end a reply that used memory with a block such as::

    <oai-mem-citation>
    <citation_entries>
    MEMORY.md:234-236|note=[how it was used]
    </citation_entries>
    <rollout_ids>
    019c6e27-e55b-73d1-87d8-4e01f1f75043
    </rollout_ids>
    </oai-mem-citation>

Older builds wrote ``<thread_ids>`` instead of ``<rollout_ids>``. mnemolog's own
memory folder marks every bullet with ``[item:<uuid>]``; an agent that quotes
those markers cites items directly (see :func:`parse_item_ids`). An entry
naming a skill's file (``skills/<name>/SKILL.md``, with or without lines) cites
that skill (see :func:`skill_file`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mnemolog.domain.transcript import CitationRef

_BLOCK = re.compile(r"<oai-mem-citation>(.*?)</oai-mem-citation>", re.DOTALL | re.IGNORECASE)
_ENTRIES = re.compile(r"<citation_entries>(.*?)</citation_entries>", re.DOTALL | re.IGNORECASE)
_IDS = re.compile(
    r"<(rollout_ids|thread_ids)>(.*?)</\1>",
    re.DOTALL | re.IGNORECASE,
)
_UUID = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    re.IGNORECASE,
)
_ITEM_ID = re.compile(
    r"\[item:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\]",
    re.IGNORECASE,
)
_NOTE_MARK = "|note=["
_SKILL_PATH = re.compile(r"(?:^|/)(skills/([a-z0-9]+(?:-[a-z0-9]+)*)/SKILL\.md)$")


@dataclass(frozen=True)
class CitationEntry:
    """One parsed citation entry: which lines of which memory file, and why."""

    path: str
    line_start: int | None
    line_end: int | None
    note: str | None


def is_uuid(value: str) -> bool:
    """Return whether ``value`` is a canonical (8-4-4-4-12 hex) UUID."""
    return bool(_UUID.match(value))


def _unique_uuids(values: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for raw in values:
        value = raw.strip().lower()
        if value and is_uuid(value):
            seen.setdefault(value, None)
    return tuple(seen)


def parse_citation_entry(entry: str) -> CitationEntry | None:
    """Parse ``path:start-end|note=[note]``; ``None`` when there is no path.

    The note is split off at the last ``|note=[`` (the note ends with ``]``), the
    location at the last ``:`` and the range at ``-``. A location without a
    usable range keeps the whole text as the path.
    """
    text = entry.strip()
    if not text:
        return None
    note: str | None = None
    cut = text.rfind(_NOTE_MARK)
    if cut >= 0:
        note = text[cut + len(_NOTE_MARK) :]
        note = note[:-1] if note.endswith("]") else note
        text = text[:cut].strip()
    path, start, end = text, None, None
    colon = text.rfind(":")
    if colon > 0:
        start, end = _parse_range(text[colon + 1 :])
        if start is not None:
            path = text[:colon]
    path = path.strip()
    if not path:
        return None
    return CitationEntry(path=path, line_start=start, line_end=end, note=note)


def _parse_range(text: str) -> tuple[int | None, int | None]:
    first, _, last = text.strip().partition("-")
    try:
        start = int(first)
        end = int(last) if last else start
    except ValueError:
        return None, None
    return start, end


def format_citation_entry(entry: CitationEntry) -> str:
    """Render an entry back into Codex's one-line form."""
    text = entry.path
    if entry.line_start is not None:
        text += f":{entry.line_start}"
        if entry.line_end is not None and entry.line_end != entry.line_start:
            text += f"-{entry.line_end}"
    if entry.note is not None:
        text += f"{_NOTE_MARK}{entry.note}]"
    return text


def parse_citation_blocks(text: str) -> list[CitationRef]:
    """Return one ``CitationRef`` per ``<oai-mem-citation>`` block in ``text``.

    Entries are kept as normalised one-line strings (see
    :func:`parse_citation_entry`); ids come from ``<rollout_ids>`` or the legacy
    ``<thread_ids>``, trimmed, lower-cased, de-duplicated, UUIDs only. A block
    with neither entries nor ids is ignored.
    """
    refs: list[CitationRef] = []
    for block in _BLOCK.finditer(text):
        body = block.group(1)
        entries: list[str] = []
        for section in _ENTRIES.finditer(body):
            for line in section.group(1).splitlines():
                parsed = parse_citation_entry(line)
                if parsed is not None:
                    entries.append(format_citation_entry(parsed))
        ids = _unique_uuids(
            token
            for section in _IDS.finditer(body)
            for token in re.split(r"[\s,]+", section.group(2))
        )
        if entries or ids:
            refs.append(CitationRef(rollout_ids=ids, entries=tuple(dict.fromkeys(entries))))
    return refs


def citation_from_event(payload: Mapping[str, Any]) -> CitationRef | None:
    """Convert Codex's structured ``memory_citation`` (camelCase) into a ``CitationRef``."""
    raw_ids = payload.get("rolloutIds") or payload.get("rollout_ids") or []
    if not isinstance(raw_ids, list | tuple):  # a writer's bug (a number, a string): no ids
        raw_ids = []
    ids = _unique_uuids(str(value) for value in raw_ids if isinstance(value, str))
    entries: list[str] = []
    raw_entries = payload.get("entries") or []
    for raw in raw_entries if isinstance(raw_entries, list | tuple) else []:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("path"), str):
            continue
        start = _as_int(raw.get("lineStart", raw.get("line_start")))
        end = _as_int(raw.get("lineEnd", raw.get("line_end")))
        note = raw.get("note")
        entry = CitationEntry(
            path=raw["path"],
            line_start=start,
            line_end=end if start is not None else None,
            note=note if isinstance(note, str) else None,
        )
        entries.append(format_citation_entry(entry))
    if not entries and not ids:
        return None
    return CitationRef(rollout_ids=ids, entries=tuple(dict.fromkeys(entries)))


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return None


def skill_file(path: str) -> str | None:
    """The folder-relative ``skills/<name>/SKILL.md`` a cited path names (however it is prefixed), or None.

    A skill is one file: citing it, or any of its lines, is a use of the skill.
    """
    match = _SKILL_PATH.search(path.strip().replace("\\", "/"))
    return match.group(1) if match else None


def parse_item_ids(text: str) -> list[str]:
    """Return the mnemolog item ids cited as ``[item:<uuid>]``, lower-cased, in first-seen order."""
    return list(dict.fromkeys(match.group(1).lower() for match in _ITEM_ID.finditer(text)))
