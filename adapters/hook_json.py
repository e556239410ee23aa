"""Hook definitions in the JSON shape Claude Code and Codex share, and mnemolog's own commands in them.

``{"hooks": {"SessionStart": [{"matcher": "...", "hooks": [{"type": "command",
"command": "...", "timeout": 30}]}]}}``: Claude Code's ``settings.json`` and
Codex's ``hooks.json`` both read it. mnemolog adds one group per event and
recognises its own handlers by their command, so adding is idempotent and
removing leaves every other hook as it was.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A handler mnemolog installed: its command runs `mnemolog context --hook` or `mnemolog capture --hook`.
_OURS = re.compile(r"mnemolog['\"]?\s+(?:context|capture)\s+--hook\b")


@dataclass(frozen=True)
class Hook:
    """One handler mnemolog installs for an event."""

    event: str
    command: str
    matcher: str | None = None
    timeout: int | None = None

    def group(self) -> dict[str, Any]:
        """The matcher group holding this handler."""
        handler: dict[str, Any] = {"type": "command", "command": self.command}
        if self.timeout is not None:
            handler["timeout"] = self.timeout
        group: dict[str, Any] = {"hooks": [handler]}
        if self.matcher is not None:
            group = {"matcher": self.matcher, **group}
        return group


def command_line(executable: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """A shell command running ``executable ARGS`` (absolute path, quoted), with ``env`` set before it."""
    prefix = "".join(f"{name}={shlex.quote(value)} " for name, value in sorted((env or {}).items()))
    return prefix + shlex.join([str(executable), *args])


def is_ours(handler: Any) -> bool:
    """Whether a hook handler is one mnemolog installed."""
    return isinstance(handler, dict) and isinstance(handler.get("command"), str) and bool(_OURS.search(handler["command"]))


def load(data: bytes | None) -> dict[str, Any]:
    """A JSON settings document (``{}`` for no file or an empty one)."""
    if data is None or not data.strip():
        return {}
    document = json.loads(data)
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def dump(document: dict[str, Any]) -> bytes:
    """The document as the agents write it (two-space indent, a final newline)."""
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def without_ours(document: dict[str, Any]) -> dict[str, Any]:
    """The document with mnemolog's handlers removed (and groups or events left empty by that)."""
    hooks = document.get("hooks")
    if not isinstance(hooks, dict):
        return document
    kept_events: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept_events[event] = groups
            continue
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            rest = [h for h in handlers if not is_ours(h)]
            if rest:
                kept_groups.append({**group, "hooks": rest})
            elif len(rest) == len(handlers):
                kept_groups.append(group)
        if kept_groups:
            kept_events[event] = kept_groups
    result = {k: v for k, v in document.items() if k != "hooks"}
    if kept_events:
        result["hooks"] = kept_events
    return result


def _our_groups(document: dict[str, Any]) -> list[tuple[str, str]]:
    hooks = document.get("hooks")
    found = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_ours(h) for h in handlers):
                found.append((event, json.dumps(group, sort_keys=True)))
    return sorted(found)


def with_hooks(document: dict[str, Any], wanted: list[Hook]) -> dict[str, Any]:
    """The document with exactly ``wanted`` as mnemolog's handlers (any older ones of mnemolog replaced)."""
    if _our_groups(document) == sorted((h.event, json.dumps(h.group(), sort_keys=True)) for h in wanted):
        return document  # already installed as wanted: nothing moves
    base = without_ours(document)
    hooks = dict(base.get("hooks") or {})
    for hook in wanted:
        hooks[hook.event] = [*hooks.get(hook.event, []), hook.group()]
    return {**base, "hooks": hooks}


def hook_answer(context: str | None, reload_skills: bool, event: str = "SessionStart") -> dict[str, Any] | None:
    """The hook JSON of ``event`` (SessionStart, UserPromptSubmit): the added context and, after writing skills, ``reloadSkills``."""
    if context is None and not reload_skills:
        return None
    output: dict[str, Any] = {"hookEventName": event}
    if context is not None:
        output["additionalContext"] = context
    if reload_skills:
        output["reloadSkills"] = True  # Claude Code lists skills before SessionStart hooks run: list them again
    return {"hookSpecificOutput": output}
