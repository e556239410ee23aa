"""Small Codex rollouts written by the tests themselves (our own sample text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_rollout(
    folder: Path,
    thread: str,
    user_text: str,
    *,
    cwd: str = "/home/dev/acme/api",
    remote: str | None = "git@github.com:acme/api.git",
    when: str = "2026-10-20T10:00:00.000Z",
    commands: tuple[tuple[str, str, int], ...] = (("make test", "12 passed", 0),),
) -> Path:
    """A current-format rollout: one user message and some shell calls with outputs."""
    meta: dict[str, Any] = {"id": thread, "timestamp": when, "cwd": cwd, "source": "cli", "cli_version": "0.130.0"}
    if remote:
        meta["git"] = {"branch": "main", "repository_url": remote}
    lines: list[dict[str, Any]] = [
        {"timestamp": when, "type": "session_meta", "payload": meta},
        {"timestamp": when, "type": "event_msg", "payload": {"type": "user_message", "message": user_text}},
        {"timestamp": when, "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": user_text}]}},
    ]
    for n, (command, output, code) in enumerate(commands):
        call = f"call_{n}"
        lines.append({"timestamp": when, "type": "response_item", "payload": {
            "type": "function_call", "name": "shell", "call_id": call, "arguments": json.dumps({"command": ["bash", "-lc", command]})}})
        lines.append({"timestamp": when, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call,
            "output": json.dumps({"output": output, "metadata": {"exit_code": code}})}})
    lines.append({"timestamp": when, "type": "response_item", "payload": {
        "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rollout-{when[:19].replace(':', '-')}-{thread}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def thread_id(n: int) -> str:
    """A UUIDv7-shaped thread id."""
    return f"019a{n:04x}-0000-7000-8000-{n:012x}"
