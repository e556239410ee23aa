"""Line-level evidence: where in its sessions an item's text is supported.

An item names its evidence sessions; code (not the model) then finds, in each
session's transcript, the lines that share the most words with the item, and
keeps each as a span: the session, the line of the session file it was read
from, the transcript item's index, and a short verbatim quote. Lines a
tombstone cut, or that hold a redaction, are never quoted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from mnemolog.domain.events import Value
from mnemolog.domain.holes import has_hole

if TYPE_CHECKING:  # the transcript's pydantic models: not loaded by the reads that show spans (context)
    from mnemolog.domain.transcript import TranscriptItem

QUOTE_WORDS = 12
QUOTE_CHARS = 160
_WORD = re.compile(r"\w+", re.UNICODE)
_STOP_WORDS = (
    "the a an and or of to in on for with from by at is are was were be been it this that these those as "
    "use used using run ran when then than into not no yes you your we our i me my do does did has have "
    "had can could should would will just also only all any each every there here what which who how"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
_CODE = re.compile(r"`([^`\n]+)`")
# By ItemKind's values (a StrEnum member looks its value up): user, tool call, tool output, assistant.
_KIND_ORDER = {"user": 0, "tool_call": 1, "tool_output": 2, "assistant": 3}


class EvidenceSpan(Value):
    """One place an item's text is supported."""

    session_id: UUID
    line: int | None  # the session file's line (1 = first); None when the reader could not tell
    item: int  # the transcript item's index
    quote: str  # a few words of that line, verbatim


def content_words(text: str) -> set[str]:
    """The words that carry meaning (case-folded, three letters or more, no stop words)."""
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if len(w) >= 3 and w not in _STOP}


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)


def _lines(item: TranscriptItem) -> Iterator[str]:
    """The quotable lines of an item: a tool call's serialised input by its values (what the file holds)."""
    pieces: list[str] = [item.text]
    if item.text[:1] == "{":
        try:
            pieces = list(_leaves(json.loads(item.text)))
        except ValueError:
            pieces = [item.text]
    for piece in pieces:
        for line in piece.split("\n"):
            if line.strip() and not has_hole(line) and "[REDACTED" not in line:
                yield line


def _best_window(line: str, wanted: set[str]) -> tuple[int, str]:
    """The run of at most ``QUOTE_WORDS`` words of ``line`` holding the most distinct wanted words, verbatim.

    Distinct: a word repeated ("dev dev" in a listing's owner columns) is one word of evidence.
    """
    words = list(_WORD.finditer(line))
    best, best_at = 0, (0, 0)
    for start in range(len(words)):
        if words[start].group(0).casefold() not in wanted:
            continue  # a quote starts and ends on a word it is quoted for
        seen: set[str] = set()
        for end in range(start, min(start + QUOTE_WORDS, len(words))):
            word = words[end].group(0).casefold()
            if word in wanted and word not in seen:
                seen.add(word)
                hits = len(seen)
                if hits > best:
                    best, best_at = hits, (start, end)
    if not best:
        return 0, ""
    first, last = words[best_at[0]], words[best_at[1]]
    return best, line[first.start() : last.end()][:QUOTE_CHARS]


def _code_words(text: str) -> set[str]:
    """The words of the text's code spans (`just lint`): a command's words count, even the common ones."""
    return {w.casefold() for span in _CODE.findall(text) for w in _WORD.findall(span) if len(w) >= 2}


def _related_outputs(transcript: Sequence[TranscriptItem], wanted: set[str]) -> set[int]:
    """The indexes of tool outputs whose call shares a content word with ``wanted`` (paired by call id, else the call before)."""
    about: dict[str, bool] = {}
    last = False
    related: set[int] = set()
    for index, item in enumerate(transcript):
        if item.kind == "tool_call":
            last = any(content_words(line) & wanted for line in _lines(item))
            if item.call_id:
                about[item.call_id] = last
        elif item.kind == "tool_output" and (about.get(item.call_id, last) if item.call_id else last):
            related.add(index)
    return related


def locate_spans(text: str, session_id: UUID, transcript: Sequence[TranscriptItem], limit: int = 2) -> tuple[EvidenceSpan, ...]:
    """The lines of one session's transcript that best support ``text`` (at most ``limit``), as spans.

    A line must share at least two distinct content words with the text (one
    when the text has only one); user messages come before tool calls, tool
    output and the assistant's words at equal scores, then earlier lines. A
    tool's output is quoted only when its call shares a word with the text: it
    is the result of a command the text is about, never another command's
    output that happens to hold the same words (``cat package.json`` for
    "`npm run build` passed").
    """
    wanted = content_words(text) | _code_words(text)
    if not wanted:
        return ()
    need = min(2, len(wanted))
    found: list[tuple[int, int, int, str]] = []  # (-score, kind order, index, quote)
    related = _related_outputs(transcript, wanted)
    for index, item in enumerate(transcript):
        if item.kind == "tool_output" and index not in related:
            continue
        best: tuple[int, str] = (0, "")
        for line in _lines(item):
            scored = _best_window(line, wanted)
            if scored[0] > best[0]:
                best = scored
        if best[0] >= need:
            found.append((-best[0], _KIND_ORDER.get(item.kind, 9), index, best[1]))
    found.sort()
    return tuple(
        EvidenceSpan(session_id=session_id, line=transcript[index].line, item=index, quote=quote)
        for _, _, index, quote in found[:limit]
    )
