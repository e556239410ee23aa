"""Read Codex rollouts (current envelope format and the mid-2025 legacy format).

What is kept mirrors what Codex's own phase 1 sends to its model: user and
assistant messages (minus developer/system messages, ``AGENTS.md`` and
``<skill>`` injections), tool calls and their outputs, and web searches.
Reasoning, ghost snapshots and compaction items are dropped.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from mnemolog.adapters.command_outcomes import sandbox_failure
from mnemolog.domain import served_memory
from mnemolog.domain.citation_parsing import citation_from_event, parse_citation_blocks
from mnemolog.domain.transcript import (
    CitationRef,
    ItemKind,
    SessionMeta,
    Transcript,
    TranscriptItem,
)

SOURCE = "codex"

# Line types Codex writes that carry nothing mnemolog keeps: counted in ``ignored``, never warned about.
_QUIET_LINE_TYPES = frozenset(
    {"turn_context", "compacted", "inter_agent_communication", "world_state", "token_usage_record"}
)
# response_item types deliberately dropped (phase 1 drops them too).
_DROPPED_ITEM_TYPES = frozenset(
    {
        "reasoning",
        "ghost_snapshot",
        "compaction",
        "compaction_summary",
        "compacted",
        "image_generation_call",
    }
)
_CALL_TYPES = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_NON_INTERACTIVE_SOURCES = frozenset({"exec", "mcp"})
_EXIT_HEADER = re.compile(
    r"^(?:.*\n){0,6}?(?:Process exited with code|Exit code:)\s*(-?\d{1,10})\b", re.MULTILINE
)
_CITATION_BLOCK = re.compile(r"\s*<oai-mem-citation>.*?</oai-mem-citation>\s*", re.DOTALL)
_ENV_CWD = re.compile(r"<environment_context>.*?<cwd>(.*?)</cwd>", re.DOTALL)
_ENV_BLOCK = re.compile(r"<environment_context>.*?(?:</environment_context>|\Z)", re.DOTALL)
_UUID_IN_NAME = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.IGNORECASE
)


def parse_timestamp(value: Any) -> datetime | None:
    """Parse an ISO-8601 timestamp (``Z`` allowed) into an aware UTC datetime, else ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
        parsed = parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # not a date, or an offset past the calendar's edge
        return None
    # Years no agent wrote in: later arithmetic (idle time, windows) would overflow.
    return parsed if 1970 <= parsed.year <= 2999 else None


def is_injected_user_part(text: str) -> bool:
    """Whether a user content part is an instruction injection phase 1 drops.

    That is ``# AGENTS.md instructions …</INSTRUCTIONS>``, ``<skill>…</skill>``
    (trimmed, case-insensitive), and also the older ``<user_instructions>``
    wrapper Codex used for ``AGENTS.md`` before the heading form.
    ``<environment_context>`` is kept.
    """
    folded = text.strip().lower()
    return (
        (folded.startswith("# agents.md instructions") and folded.endswith("</instructions>"))
        or (folded.startswith("<skill>") and folded.endswith("</skill>"))
        or (folded.startswith("<user_instructions>") and folded.endswith("</user_instructions>"))
    )


def classify_source(source: Any, originator: Any = None) -> tuple[str | None, bool, bool]:
    """Map ``session_meta.source`` to ``(origin, interactive, is_subagent)``.

    ``"cli"`` and ``"vscode"`` (and unknown strings) are interactive. ``"exec"``
    (``codex exec``) and ``"mcp"`` (Codex run as an MCP server by another
    program) are treated as non-interactive: no human typed those prompts. An
    object such as ``{"subagent": …}`` is a subagent thread: origin
    ``"subagent"``, non-interactive. Without a source, an ``originator`` that
    names exec (``codex_exec``) counts as exec.
    """
    if isinstance(source, str) and source:
        return source, source not in _NON_INTERACTIVE_SOURCES, False
    if isinstance(source, Mapping) and source:
        if "subagent" in source:
            return "subagent", False, True
        return str(next(iter(source))), False, False
    if isinstance(originator, str) and "exec" in originator.lower():
        return "exec", False, False
    return None, True, False


def _join_text_parts(content: Any, *, drop_injected: bool) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if not isinstance(part, Mapping):
                continue
            text = part.get("text")
            if not isinstance(text, str) or not text.strip():
                continue
            if drop_injected and is_injected_user_part(text):
                continue
            parts.append(text)
    return "\n\n".join(parts)


def parse_tool_output(output: Any) -> tuple[str, int | None, bool]:
    """Turn a Codex tool output into ``(text, exit_code, is_error)``.

    Handles plain strings, lists of content parts, the older JSON-string shell
    output ``{"output": …, "metadata": {"exit_code": …}}``, ``{"content": …,
    "success": …}`` objects and unified-exec headers (``Process exited with
    code N``), and the plain strings mid-2025 Codex wrote when its sandbox
    stopped a command (``failed in sandbox LinuxSeccomp with execution error:
    … exit code: 101 …``, ``… command timed out``). A non-zero exit code,
    ``success: false`` or a sandbox refusal is an error.
    """
    success: bool | None = None
    exit_code: int | None = None
    if isinstance(output, Mapping):
        success = output.get("success") if isinstance(output.get("success"), bool) else None
        output = output.get("content", output.get("output", ""))
    if isinstance(output, list):
        text = _join_text_parts(output, drop_injected=False)
    elif isinstance(output, str):
        text = output
    else:
        text = json.dumps(output, ensure_ascii=False) if output is not None else ""
    stripped = text.lstrip()
    if stripped.startswith("{") and '"output"' in stripped:
        try:
            decoded = json.loads(stripped)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, Mapping) and isinstance(decoded.get("output"), str):
            text = decoded["output"]
            metadata = decoded.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, Mapping) else None
            if isinstance(code, int) and not isinstance(code, bool) and abs(code) < 2**31:
                exit_code = code
    if exit_code is None:
        header = _EXIT_HEADER.match(text[:2000])
        if header:
            exit_code = int(header.group(1))
    refused = sandbox_failure(text) if exit_code is None else None
    if refused is not None:  # mid-2025: the sandbox's plain-string refusal or time-out instead of the output
        exit_code = refused[0]
    is_error = (exit_code is not None and exit_code != 0) or success is False or refused is not None
    return text, exit_code, is_error


def _call_text(payload: Mapping[str, Any]) -> str:
    kind = payload.get("type")
    if kind == "custom_tool_call":
        value = payload.get("input")
    elif kind == "local_shell_call":
        action = payload.get("action")
        command = action.get("command") if isinstance(action, Mapping) else None
        if isinstance(command, list) and all(isinstance(word, str) for word in command):
            return shlex.join(command)
        value = action
    else:
        value = payload.get("arguments")
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _web_search_text(payload: Mapping[str, Any]) -> str:
    action = payload.get("action")
    if isinstance(action, Mapping):
        query = action.get("query")
        if isinstance(query, str) and query:
            return query
        url = action.get("url")
        if isinstance(url, str) and url:
            return url
        return json.dumps(action, ensure_ascii=False)
    query = payload.get("query")
    return query if isinstance(query, str) else ""


@dataclass
class _State:
    """Mutable accumulator while reading one rollout."""

    path: str
    skipped: dict[str, int]
    items: list[TranscriptItem] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    have_meta: bool = False
    first_event_user_message: str | None = None
    # Prompts as ``event_msg`` ``user_message`` (where the transcript stood, text, time): the VS Code extension
    # records them only this way; the CLI also as a ``response_item`` user message (then the event adds nothing).
    event_prompts: list[tuple[int, str, datetime | None]] = field(default_factory=list)
    timestamps: list[datetime] = field(default_factory=list)
    used_web_search: bool = False
    mcp_tools: dict[str, None] = field(default_factory=dict)
    citations: list[CitationRef] = field(default_factory=list)
    tool_by_call: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, int] = field(default_factory=dict)
    environment_cwd: str | None = None

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def ignore(self, kind: str) -> None:
        self.ignored[kind] = self.ignored.get(kind, 0) + 1

    def add_citation(self, ref: CitationRef) -> None:
        key = (ref.rollout_ids, ref.entries)
        if all((known.rollout_ids, known.entries) != key for known in self.citations):
            self.citations.append(ref)

    def note_tool(self, name: str | None) -> None:
        # mnemolog's own MCP answers are served memory (kept as context), not external context.
        if name and name.startswith("mcp__") and not served_memory.is_mnemolog_tool(name):
            self.mcp_tools.setdefault(name, None)


def _apply_meta(state: _State, payload: Mapping[str, Any]) -> None:
    if state.have_meta:
        return
    state.have_meta = True
    raw_git = payload.get("git")
    git: Mapping[str, Any] = raw_git if isinstance(raw_git, Mapping) else {}
    origin, interactive, is_subagent = classify_source(
        payload.get("source"), payload.get("originator")
    )
    state.meta = {
        "native_id": payload.get("id") if isinstance(payload.get("id"), str) else None,
        "cwd": payload.get("cwd") if isinstance(payload.get("cwd"), str) else None,
        "git_branch": _str_or_none(git.get("branch")),
        "git_remote": _str_or_none(git.get("repository_url")),
        "git_commit": _str_or_none(git.get("commit_hash")),
        "agent_version": _str_or_none(payload.get("cli_version")),
        "origin": origin,
        "interactive": interactive,
        "is_subagent": is_subagent,
        "started_at": parse_timestamp(payload.get("timestamp")),
        "memory_mode": _str_or_none(payload.get("memory_mode")),
    }


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _response_item(state: _State, payload: Mapping[str, Any], ts: datetime | None) -> None:
    kind = payload.get("type")
    if kind == "message":
        role = payload.get("role")
        if role not in ("user", "assistant"):
            return  # developer and system messages are instructions, not conversation
        text = _join_text_parts(payload.get("content"), drop_injected=role == "user")
        if role == "user":
            text = _user_context(state, text, ts)
        if served_memory.has_served_block(text):
            text, cut = served_memory.without_served_blocks(text)
            state.items.append(_served(served_memory.placeholder("session-start context", cut), "mnemolog", ts))
        if role == "assistant":
            for ref in parse_citation_blocks(text):
                state.add_citation(ref.model_copy(update={"timestamp": ts}))
            text = _CITATION_BLOCK.sub("\n", text).strip() if "<oai-mem-citation>" in text else text
        if text.strip():
            item_kind = ItemKind.USER if role == "user" else ItemKind.ASSISTANT
            state.items.append(TranscriptItem(kind=item_kind, text=text, timestamp=ts))
    elif kind in _CALL_TYPES:
        name = payload.get("name") if isinstance(payload.get("name"), str) else None
        namespace = payload.get("namespace")
        if name and isinstance(namespace, str) and namespace.startswith("mcp__"):
            name = f"{namespace.rstrip('_')}__{name}"  # Codex 0.169: MCP tools inside a namespace tool
        if kind == "local_shell_call":
            name = name or "local_shell"
        raw_call_id = payload.get("call_id") or payload.get("id")
        call_id = raw_call_id if isinstance(raw_call_id, str) else None
        if call_id and name:
            state.tool_by_call[call_id] = name
        state.note_tool(name)
        state.items.append(
            TranscriptItem(
                kind=ItemKind.TOOL_CALL,
                text=_call_text(payload),
                tool=name,
                call_id=call_id,
                timestamp=ts,
            )
        )
    elif kind in _OUTPUT_TYPES:
        call_id = payload.get("call_id") if isinstance(payload.get("call_id"), str) else None
        text, exit_code, is_error = parse_tool_output(payload.get("output"))
        tool = state.tool_by_call.get(call_id) if call_id else None
        if served_memory.is_mnemolog_tool(tool):
            state.items.append(_served(served_memory.placeholder(f"answer of {tool}", len(text)), tool, ts, call_id))
            return
        state.items.append(
            TranscriptItem(
                kind=ItemKind.TOOL_OUTPUT,
                text=text,
                tool=state.tool_by_call.get(call_id) if call_id else None,
                call_id=call_id,
                is_error=is_error,
                exit_code=exit_code,
                timestamp=ts,
            )
        )
    elif kind == "web_search_call":
        state.used_web_search = True
        raw_id = payload.get("id") or payload.get("call_id")
        state.items.append(
            TranscriptItem(
                kind=ItemKind.TOOL_CALL,
                text=_web_search_text(payload),
                tool="web_search",
                call_id=raw_id if isinstance(raw_id, str) else None,
                timestamp=ts,
            )
        )
    elif kind in _DROPPED_ITEM_TYPES:
        return
    else:
        state.skip(f"unknown item type: {kind}")


def _event_msg(state: _State, payload: Mapping[str, Any], ts: datetime | None) -> None:
    kind = payload.get("type")
    if kind == "user_message":
        message = payload.get("message")
        if state.first_event_user_message is None and isinstance(message, str) and message.strip():
            state.first_event_user_message = message
        if isinstance(message, str) and message.strip():
            state.event_prompts.append((len(state.items), message, ts))
    elif kind == "agent_message":
        citation = payload.get("memory_citation")
        if isinstance(citation, Mapping):
            ref = citation_from_event(citation)
            if ref is not None:
                state.add_citation(ref.model_copy(update={"timestamp": ts}))
    elif kind == "item_completed":
        item = payload.get("item")
        if isinstance(item, Mapping) and item.get("type") == "McpToolCall":
            server, tool = item.get("server"), item.get("tool")
            if isinstance(server, str) and isinstance(tool, str):
                state.note_tool(f"mcp__{server}__{tool}")
    elif isinstance(kind, str) and kind.startswith("mcp_tool_call"):
        invocation = payload.get("invocation")
        if isinstance(invocation, Mapping):
            server, tool = invocation.get("server"), invocation.get("tool")
            if isinstance(server, str) and isinstance(tool, str):
                state.note_tool(f"mcp__{server}__{tool}")
    elif isinstance(kind, str) and kind.startswith("web_search"):
        state.used_web_search = True


def _envelope_line(state: _State, record: Mapping[str, Any]) -> None:
    kind = record.get("type")
    payload = record.get("payload")
    ts = parse_timestamp(record.get("timestamp"))
    if ts is not None:
        state.timestamps.append(ts)
    if not isinstance(payload, Mapping):
        state.skip(f"unknown line type: {kind}")
        return
    if kind == "session_meta":
        _apply_meta(state, payload)
    elif kind == "response_item":
        _response_item(state, payload, ts)
    elif kind == "event_msg":
        _event_msg(state, payload, ts)
    elif kind in _QUIET_LINE_TYPES:
        state.ignore(str(kind))
    else:
        state.skip(f"unknown line type: {kind}")


def _legacy_line(state: _State, record: Mapping[str, Any]) -> None:
    ts = parse_timestamp(record.get("timestamp"))
    if ts is not None:
        state.timestamps.append(ts)
    if "record_type" in record:
        return  # {"record_type": "state"} markers
    if not state.have_meta and "type" not in record and "id" in record:
        _apply_meta(state, record)
        return
    if isinstance(record.get("type"), str):
        _response_item(state, record, ts)
    else:
        state.skip("unknown line type: None")


def _with_event_prompts(state: _State) -> None:
    """The prompts recorded only as events, put in the transcript as the user's messages where they stood."""
    said = {_words(i.text) for i in state.items if i.kind is ItemKind.USER}
    missing = [(at, text, ts) for at, text, ts in state.event_prompts if _words(text) not in said and not any(_words(text) in s for s in said)]
    for at, text, ts in reversed(missing):  # from the end: earlier positions stay where they were
        if served_memory.has_served_block(text):
            text, _ = served_memory.without_served_blocks(text)
        if text.strip():
            state.items.insert(at, TranscriptItem(kind=ItemKind.USER, text=text, timestamp=ts))


def _words(text: str) -> str:
    return " ".join(text.split())


def _first_user_text(items: Iterable[TranscriptItem]) -> str | None:
    for item in items:
        if item.kind is ItemKind.USER:
            folded = item.text.lstrip().lower()
            if not folded.startswith(("<environment_context>", "<user_instructions>")):
                return str(item.text)
    return None


def _native_id_from_path(path: str) -> str:
    name = PurePath(path).name
    found = _UUID_IN_NAME.findall(name)
    return found[-1].lower() if found else name.split(".")[0]


def read_codex_records(
    records: Iterable[Mapping[str, Any]],
    *,
    path: str,
    line_count: int = 0,
    skipped: Mapping[str, int] | None = None,
) -> Transcript:
    """Build a ``Transcript`` from the decoded lines of a Codex rollout.

    Accepts both the envelope format (``{"timestamp", "type", "payload"}``) and
    the legacy format (bare session meta first, ``record_type`` markers, bare
    response items), deciding per line. ``skipped`` carries the counts of lines
    the decoder already rejected; unknown line and item types are added to it.
    """
    state = _State(path=path, skipped=dict(skipped or {}))
    for record in records:
        if isinstance(record.get("payload"), Mapping) or (
            isinstance(record.get("type"), str) and record.get("type") in _ENVELOPE_TYPES
        ):
            _envelope_line(state, record)
        else:
            _legacy_line(state, record)
    _with_event_prompts(state)
    meta = state.meta
    cwd = meta.get("cwd") or state.environment_cwd
    started = meta.get("started_at") or (min(state.timestamps) if state.timestamps else None)
    updated = max(state.timestamps) if state.timestamps else started
    session = SessionMeta(
        source=SOURCE,
        native_id=meta.get("native_id") or _native_id_from_path(path),
        path=path,
        cwd=cwd,
        git_branch=meta.get("git_branch"),
        git_remote=meta.get("git_remote"),
        git_commit=meta.get("git_commit"),
        agent_version=meta.get("agent_version"),
        origin=meta.get("origin"),
        interactive=meta.get("interactive", True),
        is_subagent=meta.get("is_subagent", False),
        started_at=started,
        updated_at=updated,
        first_user_message=state.first_event_user_message or _first_user_text(state.items),
        memory_mode=meta.get("memory_mode"),
    )
    return Transcript(
        meta=session,
        items=tuple(state.items),
        line_count=line_count,
        skipped=state.skipped,
        used_web_search=state.used_web_search,
        used_mcp_tools=tuple(state.mcp_tools),
        citations=tuple(state.citations),
        ignored=state.ignored,
    )


def _served(text: str, tool: str | None, ts: datetime | None, call_id: str | None = None) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.CONTEXT, text=text, tool=tool, call_id=call_id, timestamp=ts)


def _user_context(state: _State, text: str, ts: datetime | None) -> str:
    """A user message minus Codex's ``<environment_context>`` blocks, which become context items."""
    if "<environment_context>" not in text:
        return text
    for block in _ENV_BLOCK.findall(text):
        found = _ENV_CWD.search(block)
        if found and found.group(1).strip() and state.environment_cwd is None:
            state.environment_cwd = found.group(1).strip()
        state.items.append(TranscriptItem(kind=ItemKind.CONTEXT, text=block, tool="environment_context", timestamp=ts))
    return _ENV_BLOCK.sub("", text).strip()


_ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg"}) | _QUIET_LINE_TYPES

