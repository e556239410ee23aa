"""Writers for session files in the agents' own on-disk formats (our own sample text).

``CodexRollout`` writes a current-format Codex rollout (``session_meta``,
developer permissions, ``AGENTS.md`` and ``<environment_context>`` user
parts, ``event_msg`` user messages, ``exec_command`` calls with unified-exec
output headers, ``apply_patch``, ``turn_context``, token counts,
``task_complete``), as in ``../shared/fixtures/codex-rollouts``.
``ClaudeSession`` writes a Claude Code 2.1 transcript (one content block per
assistant line, ``tool_use`` / ``tool_result`` with ``toolUseResult``,
``isMeta`` hook output, ``attachment`` lines, file-history snapshots,
``system`` turn durations), as in ``../shared/fixtures/claude-code``.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def uuid7(moment: datetime, n: int) -> str:
    """A UUIDv7 whose time is ``moment`` (Codex thread ids), made unique by ``n``."""
    millis = int(moment.timestamp() * 1000)
    value = (millis << 80) | (0x7 << 76) | ((n & 0xFFF) << 64) | (0b10 << 62) | (n * 0x9E3779B97F4A7C15 & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


class _Timeline:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def tick(self, seconds: int = 20) -> str:
        self.now += timedelta(seconds=seconds)
        return _iso(self.now)


class CodexRollout:
    """A Codex rollout being written, one turn at a time."""

    def __init__(
        self,
        n: int,
        start: datetime,
        cwd: str,
        remote: str | None,
        *,
        branch: str = "main",
        agents_md: str | None = None,
        source: str = "cli",
    ) -> None:
        self.thread = uuid7(start, n)
        self.start = start
        self.cwd = cwd
        self.agents_md = agents_md
        self.time = _Timeline(start)
        self.lines: list[dict[str, Any]] = []
        self.calls = 0
        meta: dict[str, Any] = {
            "id": self.thread,
            "timestamp": _iso(start),
            "cwd": cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.130.0",
            "source": source,
            "model_provider": "openai",
        }
        if remote:
            meta["git"] = {"commit_hash": f"{n:07x}0c0ffee", "branch": branch, "repository_url": remote}
        self._add("session_meta", meta)
        self._add("response_item", {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>Filesystem sandboxing: workspace-write.</permissions instructions>"}]})
        self.first = True

    def _add(self, kind: str, payload: dict[str, Any], seconds: int = 5) -> None:
        self.lines.append({"timestamp": self.time.tick(seconds), "type": kind, "payload": payload})

    def user(self, text: str) -> CodexRollout:
        """A turn the user typed (the first one carries AGENTS.md and the environment context)."""
        self._add("event_msg", {"type": "task_started", "turn_id": f"turn-{len(self.lines)}", "model_context_window": 258400})
        parts: list[dict[str, str]] = []
        if self.first:
            if self.agents_md:
                parts.append({"type": "input_text", "text": f"# AGENTS.md instructions for {self.cwd}\n\n<INSTRUCTIONS>\n{self.agents_md}\n</INSTRUCTIONS>"})
            parts.append({"type": "input_text", "text": (
                f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>zsh</shell>\n"
                f"  <current_date>{self.start.date().isoformat()}</current_date>\n  <timezone>Europe/Berlin</timezone>\n</environment_context>")})
            self.first = False
        parts.append({"type": "input_text", "text": text})
        self._add("response_item", {"type": "message", "role": "user", "content": parts})
        self._add("event_msg", {"type": "user_message", "message": text, "images": []}, 0)
        self._add("turn_context", {"cwd": self.cwd, "approval_policy": "on-request", "model": "gpt-5.3-codex", "summary": "auto"}, 0)
        return self

    def shell(self, command: str, output: str, code: int = 0, seconds: int = 30) -> CodexRollout:
        """An ``exec_command`` call and its unified-exec output."""
        self.calls += 1
        call = f"call_{self.thread[-6:]}{self.calls:03d}"
        self._add("response_item", {"type": "function_call", "name": "exec_command", "call_id": call,
                                     "arguments": json.dumps({"cmd": command, "workdir": self.cwd, "yield_time_ms": 10000})})
        text = (f"Chunk ID: {self.calls:06x}\nWall time: 1.{self.calls % 10} seconds\nProcess exited with code {code}\n"
                f"Original token count: {max(len(output) // 4, 1)}\nOutput:\n{output}\n")
        self._add("response_item", {"type": "function_call_output", "call_id": call, "output": text}, seconds)
        return self

    def patch(self, path: str, old: str, new: str) -> CodexRollout:
        """An ``apply_patch`` edit of one file."""
        self.calls += 1
        call = f"call_{self.thread[-6:]}{self.calls:03d}"
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"
        self._add("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call, "name": "apply_patch", "input": body})
        self._add("response_item", {"type": "custom_tool_call_output", "call_id": call,
                                     "output": json.dumps({"output": f"Success. Updated the following files:\nM {path}\n", "metadata": {"exit_code": 0}})})
        return self

    def say(self, text: str) -> CodexRollout:
        """The assistant's final answer of the turn."""
        self._add("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAB" + "x" * 40})
        self._add("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}], "phase": "final_answer"})
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 9000, "output_tokens": 400}}}, 0)
        self._add("event_msg", {"type": "task_complete", "last_agent_message": text}, 0)
        return self

    def write(self, folder: Path) -> Path:
        """Write ``sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`` under ``folder``."""
        day = folder / "codex" / f"{self.start:%Y}" / f"{self.start:%m}" / f"{self.start:%d}"
        day.mkdir(parents=True, exist_ok=True)
        path = day / f"rollout-{self.start:%Y-%m-%dT%H-%M-%S}-{self.thread}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")
        return path


class ClaudeSession:
    """A Claude Code transcript being written, one message at a time."""

    def __init__(self, n: int, start: datetime, cwd: str, *, branch: str = "main") -> None:
        self.session = str(uuid.UUID(int=(0xC1A0DE << 100) | n, version=4))
        self.start = start
        self.cwd = cwd
        self.branch = branch
        self.time = _Timeline(start)
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.count = 0

    def _uuid(self) -> str:
        self.count += 1
        return str(uuid.UUID(int=(int(self.session.replace("-", ""), 16) ^ (self.count << 20)) & ((1 << 128) - 1), version=4))

    def _line(self, kind: str, message: dict[str, Any] | None = None, seconds: int = 10, **extra: Any) -> dict[str, Any]:
        me = self._uuid()
        line: dict[str, Any] = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
            "sessionId": self.session, "version": "2.1.39", "gitBranch": self.branch, "type": kind,
        }
        if message is not None:
            line["message"] = message
        line.update(extra)
        line["uuid"] = me
        line["timestamp"] = self.time.tick(seconds)
        self.lines.append(line)
        self.parent = me
        return line

    def user(self, text: str) -> ClaudeSession:
        """A prompt the user typed."""
        self.lines.append({"type": "file-history-snapshot", "messageId": self._uuid(),
                           "snapshot": {"messageId": "m", "trackedFileBackups": {}, "timestamp": _iso(self.time.now)}, "isSnapshotUpdate": False})
        self._line("user", {"role": "user", "content": text}, permissionMode="default")
        return self

    def meta(self, text: str) -> ClaudeSession:
        """A message the harness injected (hook output): ``isMeta``."""
        self._line("user", {"role": "user", "content": [{"type": "text", "text": text}]}, isMeta=True)
        return self

    def attachment(self, kind: str, content: str) -> ClaudeSession:
        """Injected context recorded as an ``attachment`` line (newer 2.1.x)."""
        self.lines.append({"type": "attachment", "attachment": {"type": kind, "content": content}, "uuid": self._uuid(),
                           "parentUuid": self.parent, "sessionId": self.session, "timestamp": self.time.tick(1), "cwd": self.cwd})
        return self

    def _assistant(self, block: dict[str, Any], message_id: str) -> None:
        self._line("assistant", {"id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
                                 "content": [block], "stop_reason": None, "stop_sequence": None,
                                 "usage": {"input_tokens": 12, "cache_read_input_tokens": 18000, "output_tokens": 90}},
                   requestId=f"req_{message_id[4:]}")

    def tool(self, name: str, tool_input: dict[str, Any], result: str, *, is_error: bool = False, structured: Any = None) -> ClaudeSession:
        """A tool call and its result."""
        message_id = f"msg_{self._uuid().replace('-', '')[:24]}"
        call = f"toolu_{self._uuid().replace('-', '')[:24]}"
        self._assistant({"type": "tool_use", "id": call, "name": name, "input": tool_input}, message_id)
        block: dict[str, Any] = {"tool_use_id": call, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        self._line("user", {"role": "user", "content": [block]}, seconds=15,
                   toolUseResult=structured if structured is not None else (f"Error: {result}" if is_error else {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}))
        return self

    def bash(self, command: str, output: str, code: int = 0) -> ClaudeSession:
        """A Bash call: a failure reads ``Exit code N`` first, as Claude Code records it."""
        text = f"Exit code {code}\n{output}" if code else output
        return self.tool("Bash", {"command": command, "description": "Run " + command.split()[0]}, text, is_error=code != 0)

    def write_file(self, path: str, content: str) -> ClaudeSession:
        """A Write call."""
        return self.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}",
                         structured={"type": "create", "filePath": path, "content": content, "structuredPatch": []})

    def edit_file(self, path: str, old: str, new: str) -> ClaudeSession:
        """An Edit call."""
        return self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                         f"The file {path} has been updated.", structured={"filePath": path, "oldString": old, "newString": new})

    def say(self, text: str) -> ClaudeSession:
        """The assistant's text reply."""
        self._assistant({"type": "text", "text": text}, f"msg_{self._uuid().replace('-', '')[:24]}")
        self._line("system", None, seconds=1, subtype="turn_duration", durationMs=42000, isMeta=False)
        return self

    def write(self, folder: Path) -> Path:
        """Write ``projects/<encoded cwd>/<session>.jsonl`` under ``folder``."""
        encoded = "".join(ch if ch.isalnum() else "-" for ch in self.cwd)
        target = folder / "claude" / encoded
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{self.session}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")
        return path
