"""Which line of a session file each transcript item came from (for line-level evidence).

The readers turn records into items without saying which record; items come
out in file order, so one pass over both finds each item's record: the first
record at or after the previous item's whose strings hold a probe of the
item's text (a short piece of its first line) and, for a tool call or
result, its call id when a record names it. A string that is itself JSON
(Codex keeps shell outputs so) is looked into too. An item no record holds
keeps no line.

Most records do not hold a given probe, and most of those are told so by the
record's JSON text alone, without gathering its strings: see
:func:`_literal_probes`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from mnemolog.domain.transcript import Transcript

PROBE_CHARS = 40
LOOKAHEAD = 400  # records searched past the previous item's before giving up on one item


def _collect_strings(value: Any, out: list[str], depth: int = 0) -> None:
    """Every string of a JSON value into ``out``, and those of JSON held in its strings (two levels deep).

    A list, not a generator per value: ingest reads every record so.
    """
    if isinstance(value, str):
        out.append(value)
        if depth < 2 and value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                return
            _collect_strings(inner, out, depth + 1)
    elif isinstance(value, dict):
        for v in value.values():
            _collect_strings(v, out, depth)
    elif isinstance(value, list):
        for v in value:
            _collect_strings(v, out, depth)


def _own_strings(value: Any) -> list[str]:
    """Every string of a JSON value (``json.loads``'s dicts, lists and strs), JSON in them not parsed.

    In no particular order (a probe holds no newline: it is in the joined strings only within one),
    by a loop over a stack rather than a call per value.
    """
    out: list[str] = []
    if type(value) is not dict and type(value) is not list:
        _collect_strings(value, out, depth=2)
        return out
    stack = [value]
    while stack:
        current = stack.pop()
        for child in current.values() if type(current) is dict else current:
            kind = type(child)
            if kind is str:
                out.append(child)
            elif kind is dict or kind is list:
                stack.append(child)
    return out


def _first_line(piece: str) -> str | None:
    for line in piece.split("\n"):
        line = line.strip()
        if len(line) >= 4 and "[REDACTED" not in line:
            return line[:PROBE_CHARS]
    return None


def _probes(text: str) -> list[str]:
    """Pieces of ``text`` its record holds verbatim, all of which must match.

    Its first line; for a serialised tool input, the first lines of its first
    values instead (a file path alone also appears in the reads of that file).
    """
    if text[:1] == "{":  # a tool call's input, serialised: the record holds its values, not this JSON
        leaves: list[str] = []
        try:
            _collect_strings(json.loads(text), leaves)
        except ValueError:
            leaves = []
        found = [p for p in (_first_line(leaf) for leaf in leaves) if p][:3]
        if found:
            return found
    first = _first_line(text)
    return [first] if first else []


# What JSON may write as an escape in a string (besides \uXXXX and \/, which _literal_text rules out):
# a piece of a probe without these is written verbatim in any JSON text holding the probe, at any depth
# of JSON in strings.
_ESCAPED = re.compile(r'["\\\x00-\x1f]+')
_SHORTEST_PIECE = 3  # shorter pieces are in nearly every record: not worth a search


def _literal_pieces(probes: list[str]) -> list[str]:
    """Pieces of the probes a record's JSON text must hold verbatim if the record holds the probes.

    A string's characters appear in the JSON text as themselves, except for
    those written as escapes: quote, backslash and control characters (always),
    ``/`` and any other character (only as ``\\/`` or ``\\uXXXX``, which the
    caller checks the text has none of). So each run of a probe without the
    first kind is in the text. JSON inside a string is a string of the outer
    JSON: the same holds at every depth.
    """
    return [piece for probe in probes for piece in _ESCAPED.split(probe) if len(piece) >= _SHORTEST_PIECE]


def _literal_text(text: str) -> bool:
    """Whether ``text`` (a record's JSON) holds no ``\\u`` or ``\\/`` escape (conservatively: neither pair at all)."""
    return "\\u" not in text and "\\/" not in text


def with_lines(
    transcript: Transcript,
    records: Sequence[dict[str, Any]],
    record_lines: Sequence[int],
    record_texts: Sequence[str] | None = None,
) -> Transcript:
    """The transcript with each item's ``line`` set where a record holds its text.

    ``record_texts``: each record's JSON text, when known (it only makes the search faster).
    """
    if not transcript.items or len(records) != len(record_lines):
        return transcript
    if record_texts is not None and len(record_texts) != len(records):
        record_texts = None
    outer: dict[int, str] = {}
    whole: dict[int, str] = {}
    literal: dict[int, bool] = {}

    def holds(index: int, probes: list[str], verbatim: list[str]) -> bool:
        if verbatim and record_texts is not None:
            text = record_texts[index]
            plain = literal.get(index)
            if plain is None:
                plain = literal[index] = _literal_text(text)
            if plain and not all(probe in text for probe in verbatim):
                return False
        # Probes hold no newline, so a probe is in the joined strings only within one of them: the
        # record's own strings are looked at first, and JSON inside them is parsed only when needed.
        if index not in outer:
            outer[index] = "\n".join(_own_strings(records[index]))
        if all(probe in outer[index] for probe in probes):
            return True
        if index not in whole:
            found: list[str] = []
            _collect_strings(records[index], found)
            whole[index] = "\n".join(found)
        return all(probe in whole[index] for probe in probes)

    def search(probes: list[str], start: int) -> int | None:
        verbatim = _literal_pieces(probes)
        for index in range(start, min(len(records), start + LOOKAHEAD)):
            if holds(index, probes, verbatim):
                return index
        return None

    items = []
    at = 0
    for item in transcript.items:
        probes = _probes(item.text)
        found = None
        if probes and item.call_id:
            # a tool call or result is in a record that names its call: not in another command's output
            # that happens to hold the same words (`cat package.json` printing "npm run build")
            found = search([*probes, item.call_id], at)
        if found is None and probes:
            found = search(probes, at)
        if found is None:
            items.append(item)
            continue
        at = found
        items.append(item.model_copy(update={"line": record_lines[found]}))
    return transcript.model_copy(update={"items": tuple(items)})
