"""What ``mnemolog install codex|claude-code`` writes into each agent's own config, and how it is taken out.

Both agents get the same three things, with the absolute path of this
``mnemolog``:

- a ``SessionStart`` hook, ``mnemolog context --hook --json --agent A``: the
  project's memory (and the user's) at the start of every session, as the
  hook's added context;
- a ``SessionEnd`` hook, ``mnemolog capture --hook --agent A``: the finished
  session is ingested, extracted and consolidated in the background;
- a ``UserPromptSubmit`` hook, ``mnemolog context --hook --json --agent A``
  again (the event in its input tells the two apart): recall bearing on each
  prompt that the session was not given yet (``--no-prompt-recall``: none);
- the MCP server ``mnemolog`` (``mnemolog mcp``): search, read, note, cite.

Codex: ``$CODEX_HOME/hooks.json`` and ``[mcp_servers.mnemolog]`` in
``$CODEX_HOME/config.toml``; its memory folder (``memories/``) and the
``[features] memories`` flag are never touched (see docs/read-path.md).
Claude Code: ``~/.claude/settings.json`` (hooks) and ``~/.claude.json``
(``mcpServers``; ``$CLAUDE_CONFIG_DIR`` moves both).
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemolog.adapters import hook_json
from mnemolog.adapters.agent_config_files import FileEdit, read_bytes

AGENTS = ("codex", "claude-code")
SERVER = "mnemolog"
# Variables that choose mnemolog's store: carried into the MCP server's environment
# (Codex starts MCP servers with a minimal environment) and into the hook commands.
STORE_VARIABLES = ("MNEMOLOG_HOME",)


def mnemolog_executable() -> Path:
    """The absolute path of the ``mnemolog`` script of this installation (next to its interpreter)."""
    script = Path(sys.executable).parent / ("mnemolog.exe" if os.name == "nt" else "mnemolog")
    if script.exists():
        return script.absolute()
    argv0 = Path(sys.argv[0])
    return argv0.absolute() if argv0.name.startswith("mnemolog") and argv0.exists() else script.absolute()


@dataclass(frozen=True)
class Target:
    """Where one agent keeps its config, and the mnemolog it should run."""

    agent: str
    home: Path  # the agent's folder: $CODEX_HOME, or Claude Code's config folder
    claude_json: Path | None  # Claude Code's ~/.claude.json (None for Codex)
    mnemolog: Path
    env: dict[str, str] = field(default_factory=dict)
    prompt_recall: bool = True  # the UserPromptSubmit hook too

    @classmethod
    def for_agent(cls, agent: str, environ: Mapping[str, str] | None = None) -> Target:
        """The target for ``agent`` in this environment (``HOME``, ``CODEX_HOME``, ``CLAUDE_CONFIG_DIR``)."""
        environ = os.environ if environ is None else environ
        user = Path(environ.get("HOME") or Path.home())
        store_env = {name: str(Path(environ[name]).expanduser().absolute()) for name in STORE_VARIABLES if environ.get(name)}
        if agent == "codex":
            home = Path(environ.get("CODEX_HOME") or user / ".codex").expanduser()
            return cls(agent, home, None, mnemolog_executable(), store_env)
        config_dir = environ.get("CLAUDE_CONFIG_DIR")
        if config_dir:
            folder = Path(config_dir).expanduser()
            return cls(agent, folder, folder / ".claude.json", mnemolog_executable(), store_env)
        return cls(agent, user / ".claude", user / ".claude.json", mnemolog_executable(), store_env)

    def hooks(self) -> list[hook_json.Hook]:
        """The SessionStart, UserPromptSubmit (unless opted out) and SessionEnd handlers for this agent."""
        start = hook_json.command_line(self.mnemolog, "context", "--hook", "--json", "--agent", self.agent, env=self.env)
        end = hook_json.command_line(self.mnemolog, "capture", "--hook", "--agent", self.agent, env=self.env)
        # The same command as SessionStart: the hook's input names the event. Every prompt waits for it: a short time-out.
        prompt = [hook_json.Hook("UserPromptSubmit", start, None, 10)] if self.prompt_recall else []
        if self.agent == "codex":
            # Codex clamps a SessionEnd hook to 3 s; capture returns at once and works in the background.
            return [hook_json.Hook("SessionStart", start, "startup|resume|clear", 30), *prompt, hook_json.Hook("SessionEnd", end, None, 3)]
        return [hook_json.Hook("SessionStart", start, "startup|resume|clear|compact", 30), *prompt, hook_json.Hook("SessionEnd", end, None, 10)]

    @property
    def hooks_file(self) -> Path:
        """The file the hooks go into."""
        return self.home / ("hooks.json" if self.agent == "codex" else "settings.json")

    @property
    def mcp_file(self) -> Path:
        """The file the MCP server goes into."""
        if self.agent == "codex":
            return self.home / "config.toml"
        assert self.claude_json is not None
        return self.claude_json

    def files(self) -> list[Path]:
        """Every file an install may change."""
        return [self.hooks_file, self.mcp_file]


# ------------------------------------------------------------------ install


def install_edits(target: Target) -> list[FileEdit]:
    """The edits that install mnemolog for ``target`` (no change where it is installed already)."""
    return [_hooks_edit(target), _codex_mcp_edit(target) if target.agent == "codex" else _claude_mcp_edit(target)]


def _hooks_edit(target: Target) -> FileEdit:
    before = read_bytes(target.hooks_file)
    document = hook_json.load(before)
    wanted = hook_json.with_hooks(document, target.hooks())
    return FileEdit(target.hooks_file, before, before if wanted == document else hook_json.dump(wanted))


def _mcp_entry(target: Target) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": str(target.mnemolog), "args": ["mcp"]}
    if target.env:
        entry["env"] = dict(target.env)
    return entry


def _claude_mcp_edit(target: Target) -> FileEdit:
    path = target.mcp_file
    before = read_bytes(path)
    document = hook_json.load(before)
    servers = dict(document.get("mcpServers") or {})
    wanted = {"type": "stdio", **_mcp_entry(target)}
    if servers.get(SERVER) == wanted:
        return FileEdit(path, before, before)
    return FileEdit(path, before, hook_json.dump({**document, "mcpServers": {**servers, SERVER: wanted}}))


def _codex_mcp_edit(target: Target) -> FileEdit:
    import tomlkit

    path = target.mcp_file
    before = read_bytes(path)
    document = tomlkit.parse((before or b"").decode("utf-8"))
    # required: `codex exec` sends its first request only once the server is up (else the tools are missing).
    wanted = {**_mcp_entry(target), "startup_timeout_sec": 30, "required": True}
    servers = document.get("mcp_servers")
    if servers is not None and servers.get(SERVER) is not None and servers[SERVER].unwrap() == wanted:
        return FileEdit(path, before, before)
    new_section = tomlkit.table  # a TOML section (the layer test keeps the view-table helper name for projections)
    if servers is None:
        servers = new_section(is_super_table=True)
        document["mcp_servers"] = servers
    entry = new_section()
    for key, value in wanted.items():
        entry[key] = tomlkit.inline_table() if isinstance(value, dict) else value
        if isinstance(value, dict):
            entry[key].update(value)
    servers[SERVER] = entry
    return FileEdit(path, before, tomlkit.dumps(document).encode("utf-8"))


# ------------------------------------------------------------------ uninstall


def strip_ours(target: Target, path: Path, data: bytes, trusted_keys: list[str]) -> bytes | None:
    """``data`` (the current content of ``path``) with mnemolog's entries taken out."""
    if path == target.hooks_file:
        return hook_json.dump(hook_json.without_ours(hook_json.load(data)))
    if target.agent == "codex":
        return _strip_codex_config(data, trusted_keys)
    document = hook_json.load(data)
    servers = {k: v for k, v in (document.get("mcpServers") or {}).items() if k != SERVER}
    rest = {k: v for k, v in document.items() if k != "mcpServers"}
    return hook_json.dump({**rest, "mcpServers": servers} if servers else rest)


def _strip_codex_config(data: bytes, trusted_keys: list[str]) -> bytes:
    import tomlkit

    document = tomlkit.parse(data.decode("utf-8"))
    servers = document.get("mcp_servers")
    if servers is not None and SERVER in servers:
        del servers[SERVER]
        if not servers:
            del document["mcp_servers"]
    hooks = document.get("hooks")
    state = hooks.get("state") if hooks is not None else None
    if hooks is not None and state is not None:
        for key in trusted_keys:
            if key in state:
                del state[key]
        if not state:
            del hooks["state"]
        if not hooks:
            del document["hooks"]
    return tomlkit.dumps(document).encode("utf-8")


def same_content(path: Path, a: bytes | None, b: bytes | None) -> bool:
    """Whether two contents of ``path`` mean the same to the agent (parsed TOML or JSON)."""
    # No file reads as an empty one: a file mnemolog created and emptied again "is" the missing file.
    try:
        if path.suffix == ".toml":
            return tomllib.loads((a or b"").decode("utf-8")) == tomllib.loads((b or b"").decode("utf-8"))
        return bool(json.loads((a or b"").strip() or b"{}") == json.loads((b or b"").strip() or b"{}"))
    except (ValueError, UnicodeDecodeError):
        return a == b
