"""History excerpts: a recorded session cut into the pieces search can return.

An excerpt is one user turn as the next session would want to read it: the
assistant's last words before it (so "yes, do that" carries what was agreed
to), the user's message, and what it led to (the answer, the commands and
their results) up to the next user message. Long texts are trimmed (a tool's
output keeps its head and tail), and a turn that runs long is cut into
windows of a bounded size, each starting again with the user's message.

Only what the session said is indexed: context the harness or mnemolog put
before the model (``<environment_context>``, memory served by a hook or an
MCP tool) is never part of an excerpt, so memory cannot find its own echo.
The rules here are pure: the views cut excerpts as sessions are projected,
and cut them again when a forget scrubs (or a lift restores) a text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mnemolog.domain.transcript import ItemKind, TranscriptItem

WINDOW = 2_400  # characters an excerpt holds at most (before its lead-in)
LEAD_IN = 400  # characters of the assistant's last words before the turn
TRIMMED = {ItemKind.USER: 4_000, ItemKind.ASSISTANT: 2_000, ItemKind.TOOL_CALL: 240, ItemKind.TOOL_OUTPUT: 320}
_ROLE = {ItemKind.USER: "user", ItemKind.ASSISTANT: "assistant", ItemKind.TOOL_CALL: "ran", ItemKind.TOOL_OUTPUT: "output"}
GAP = " \u2026 "  # where a trimmed text lost its middle


@dataclass(frozen=True)
class Part:
    """One transcript item as an excerpt holds it: its index in the transcript, its role and its trimmed text."""

    index: int
    role: str  # user | assistant | ran | output | before (the assistant's words before the turn)
    text: str
    line: int | None = None


@dataclass(frozen=True)
class Excerpt:
    """One window of a session: its parts in order, the session-file lines they span and its searchable text."""

    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        """The excerpt as search indexes and shows it: one ``role: text`` line per part."""
        return excerpt_text(self.parts)

    @property
    def lines(self) -> tuple[int | None, int | None]:
        """The first and last line of the session file it comes from (None when the reader gave none)."""
        known = [p.line for p in self.parts if p.line is not None]
        return (min(known), max(known)) if known else (None, None)


def trim(text: str, limit: int) -> str:
    """``text`` in at most about ``limit`` characters: whole when it fits, else its head and tail around a gap."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head - len(GAP)
    return text[:head].rstrip() + GAP + text[-tail:].lstrip()


def excerpt_text(parts: Sequence[Part]) -> str:
    """The text of an excerpt made of ``parts``."""
    return "\n".join(f"{p.role}: {p.text}" for p in parts if p.text)


# Codex's unified-exec output starts with a header of its own; the exit code is all of it worth reading.
_EXEC_HEADER = re.compile(r"^(Chunk ID|Wall time|Original token count|Process running with session ID)\b.*\n?", re.MULTILINE)


# The agents' own bookkeeping (plans, to-do lists): what they tell themselves, not what happened.
BOOKKEEPING = frozenset({"update_plan", "TodoWrite", "TodoRead", "write_stdin"})


def readable(item: TranscriptItem) -> str:
    """What an item says, as a reader wants it: a tool call's command (not its JSON), an output without the harness's header.

    A bookkeeping tool's call says nothing ("").
    """
    if item.tool in BOOKKEEPING:
        return ""
    text = item.text.strip()
    if item.kind is ItemKind.TOOL_CALL and text.startswith("{"):
        try:
            arguments = json.loads(text)
        except ValueError:
            return text
        if isinstance(arguments, dict):
            command = arguments.get("cmd", arguments.get("command"))
            if isinstance(command, list):
                command = " ".join(str(part) for part in command)
            if isinstance(command, str):
                return command
            if set(arguments) <= {"session_id", "chars", "yield_time_ms", "max_output_tokens"} and not arguments.get("chars"):
                return ""  # a poll of a command still running: nothing was asked
    if item.kind is ItemKind.TOOL_OUTPUT:
        text = _EXEC_HEADER.sub("", text).replace("Output:\n", "", 1).strip()
    return text


def _part(index: int, item: TranscriptItem, role: str | None = None, text: str | None = None) -> Part:
    limit = LEAD_IN if role == "before" else TRIMMED[item.kind]
    return Part(index, role or _ROLE[item.kind], trim(readable(item) if text is None else text, limit), item.line)


def _turns(items: Sequence[TranscriptItem]) -> list[list[Part]]:
    """The user turns of a transcript: each a user message and what it led to (nothing before the first one)."""
    turns: list[list[Part]] = []
    for index, item in enumerate(items):
        if item.kind is ItemKind.CONTEXT or not readable(item):
            continue
        if item.kind is ItemKind.USER:
            turns.append([_part(index, item)])
        elif turns:
            turns[-1].append(_part(index, item))
    return turns


def _size(parts: Sequence[Part]) -> int:
    return sum(len(p.text) for p in parts)


def _split(head: list[Part], turn: list[Part]) -> list[Excerpt]:
    """A turn longer than a window, as windows each starting with the user's message (the first after ``head``)."""
    user, rest = turn[0], turn[1:]
    out: list[Excerpt] = []
    window = [*head, user]
    for part in rest:
        if _size(window) + len(part.text) > WINDOW and len(window) > len(head) + 1:
            out.append(Excerpt(tuple(window)))
            window = [user]
        window.append(part)
    out.append(Excerpt(tuple(window)))
    return out


def cut_excerpts(items: Sequence[TranscriptItem]) -> list[Excerpt]:
    """The excerpts of a transcript, in session order.

    Consecutive user turns share an excerpt while they fit in ``WINDOW`` (a
    short chat is one excerpt, so a decision spread over a proposal and its
    confirmation stays together); an excerpt that starts after an answer
    leads in with the assistant's last words; a turn longer than a window is
    cut into windows that each start again with the user's message.
    """
    excerpts: list[Excerpt] = []
    window: list[Part] = []
    before: Part | None = None
    for turn in _turns(items):
        if window and _size(window) + _size(turn) > WINDOW:
            excerpts.append(Excerpt(tuple(window)))
            window = []
        head = [before] if before is not None and not window else []
        if _size(head) + _size(turn) > WINDOW:
            if window:
                excerpts.append(Excerpt(tuple(window)))
                window = []
            excerpts += _split(head, turn)
        else:
            window += [*head, *turn]
        answers = [p for p in turn if p.role == "assistant"]
        before = Part(answers[-1].index, "before", trim(answers[-1].text, LEAD_IN), answers[-1].line) if answers else None
    if window:
        excerpts.append(Excerpt(tuple(window)))
    return excerpts


def rescrubbed(parts: Sequence[Part], changed: dict[int, str]) -> tuple[Part, ...]:
    """``parts`` with the items a scrub (or a restore) changed given their new text, made readable and trimmed as before."""
    out = []
    for part in parts:
        if part.index in changed:
            kind = _KIND.get(part.role, ItemKind.ASSISTANT)
            text = readable(TranscriptItem(kind=kind, text=changed[part.index]))
            limit = LEAD_IN if part.role == "before" else TRIMMED[kind]
            part = Part(part.index, part.role, trim(text, limit), part.line)
        out.append(part)
    return tuple(out)


_KIND = {role: kind for kind, role in _ROLE.items()}
