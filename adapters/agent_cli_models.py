"""The ``claude-code`` and ``codex`` backends: the agent CLIs the user already signed in to, run as a model.

Each call is one non-interactive run with structured output, the prompt on
stdin, and everything that makes the CLI an agent turned off:

- ``claude -p --output-format json --json-schema SCHEMA --no-session-persistence``
  with ``--tools ""`` (no built-in tools), ``--strict-mcp-config`` and no
  ``--mcp-config`` (no MCP servers), ``--setting-sources ""`` (no user or
  project settings, so no hooks, mnemolog's included), ``--disable-slash-commands``
  (no skills) and mnemolog's own ``--system-prompt``. Claude Code carries the
  schema as its one ``StructuredOutput`` tool; its sign-in (``~/.claude``) is
  the user's own.
- ``codex exec --ephemeral --output-schema FILE -o FILE --skip-git-repo-check
  --sandbox read-only`` with a temporary ``CODEX_HOME``: a config of the
  user's model provider and nothing else (no MCP servers, hooks, memories,
  tools or web search; mnemolog's prompt as the model instructions), and a
  copy of the user's ``auth.json`` (copied back when Codex refreshed it, as
  its refresh tokens are single-use). A session file, if Codex wrote one,
  would go into that folder and be deleted with it.

Both run in an empty temporary folder (no project instructions), with
``MNEMOLOG_MODEL_CALL=1`` in the environment (mnemolog's hooks return at once
if a CLI ran them anyway), and the prompt starts with ``MODEL_CALL_MARKER``:
a session file of such a call is never ingested. A call that runs past its
time-out is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from mnemolog.adapters.openai_models import ModelReply, strict_schema
from mnemolog.domain.extraction import TokenUsage
from mnemolog.domain.model_calls import MODEL_CALL_MARKER
from mnemolog.domain.ports import ModelError
from pydantic import BaseModel

MODEL_CALL_VARIABLE = "MNEMOLOG_MODEL_CALL"
CLI_NAMES = {"claude-code": "claude", "codex": "codex"}
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "NO_COLOR": "1",
}
SIGN_IN_WORDS = ("not logged in", "log in", "login", "sign in", "api key", "authentication", "unauthorized", "401")


def find_cli(backend: str) -> str | None:
    """The path of the backend's CLI on PATH, or None."""
    return shutil.which(CLI_NAMES[backend])


def model_prompt(messages: list[dict[str, str]]) -> tuple[str, str]:
    """The system text and the stdin prompt (marked as mnemolog's call) for a conversation."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns = [m for m in messages if m["role"] != "system"]
    parts = [MODEL_CALL_MARKER, turns[0]["content"] if turns else ""]
    for turn in turns[1:]:
        label = "Your previous answer" if turn["role"] == "assistant" else "Now"
        parts.append(f"{label}:\n{turn['content']}")
    return system, "\n\n".join(parts)


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, **QUIET, MODEL_CALL_VARIABLE: "1", **(extra or {})}


def _not_found(backend: str) -> ModelError:
    return ModelError(
        f"{backend}: the `{CLI_NAMES[backend]}` CLI is not on PATH (install it, or choose another model)",
        retryable=False,
    )


def _failure(backend: str, model: str, said: str) -> ModelError:
    said = " ".join(said.split())[-400:] or "no output"
    if any(word in said.lower() for word in SIGN_IN_WORDS):
        how = "run `claude` and sign in (or set ANTHROPIC_API_KEY)" if backend == "claude-code" else "run `codex login`"
        return ModelError(f"{backend}:{model}: not signed in: {said}; {how}", retryable=False)
    return ModelError(f"{backend}:{model}: the CLI failed: {said}", retryable=True)


class ClaudeCodeTransport:
    """One ``claude -p`` run per request."""

    backend = "claude-code"

    def __init__(self, model: str, executable: str | None = None) -> None:
        self.model = model
        self.executable = executable

    def command(self, executable: str, system: str, schema: type[BaseModel]) -> list[str]:
        """The ``claude`` arguments for one structured-output call."""
        command = [
            executable, "-p", "--output-format", "json",
            "--json-schema", json.dumps(strict_schema(schema)),
            "--no-session-persistence",
            "--tools", "",
            "--strict-mcp-config",
            "--setting-sources", "",
            "--settings", json.dumps({"disableAllHooks": True}),
            "--disable-slash-commands",
            "--system-prompt", system,
        ]
        return command + (["--model", self.model] if self.model else [])

    def send(self, messages: list[dict[str, str]], schema: type[BaseModel], timeout: float) -> ModelReply:
        """Run ``claude -p`` once; the structured output is the answer."""
        executable = self.executable or find_cli(self.backend)
        if executable is None:
            raise _not_found(self.backend)
        system, prompt = model_prompt(messages)
        with tempfile.TemporaryDirectory(prefix="mnemolog-model-") as folder:
            done = _run(self.backend, self.model, self.command(executable, system, schema), prompt, timeout, cwd=folder, env=_environment())
        try:
            data = json.loads(done.stdout)
        except ValueError:
            raise _failure(self.backend, self.model, done.stderr or done.stdout) from None
        if not isinstance(data, dict):
            raise _failure(self.backend, self.model, done.stdout)
        if done.returncode != 0 or data.get("is_error"):
            raise _failure(self.backend, self.model, str(data.get("result") or data.get("subtype") or done.stderr))
        usage = data.get("usage") or {}
        used = TokenUsage(
            input_tokens=int(usage.get("input_tokens") or 0) + int(usage.get("cache_read_input_tokens") or 0) + int(usage.get("cache_creation_input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
        )
        structured = data.get("structured_output")
        content = json.dumps(structured) if structured is not None else str(data.get("result") or "")
        finish = "length" if data.get("stop_reason") == "max_tokens" else data.get("stop_reason")
        refusal = "stop_reason refusal" if finish == "refusal" else None
        return ModelReply(content, finish, refusal, used)


class CodexTransport:
    """One ``codex exec`` run per request, in a temporary ``CODEX_HOME``."""

    backend = "codex"

    def __init__(self, model: str, executable: str | None = None, codex_home: Path | None = None) -> None:
        self.model = model
        self.executable = executable
        self.codex_home = codex_home

    def user_home(self) -> Path:
        """The user's own ``CODEX_HOME`` (where their sign-in and model provider are)."""
        if self.codex_home is not None:
            return self.codex_home
        return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")

    def config(self, instructions: Path) -> dict[str, Any]:
        """The temporary home's config: the user's model provider, mnemolog's instructions, nothing of an agent."""
        user: dict[str, Any] = {}
        path = self.user_home() / "config.toml"
        if path.is_file():
            try:
                user = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                user = {}
        config: dict[str, Any] = {key: user[key] for key in ("model_provider", "model_providers", "openai_base_url") if key in user}
        if self.model:
            config["model"] = self.model
        elif "model" in user:
            config["model"] = user["model"]
        config |= {
            "model_instructions_file": str(instructions),
            "web_search": "disabled",
            "include_apps_instructions": False,
            "include_collaboration_mode_instructions": False,
            "include_environment_context": False,
            "features": {
                name: False
                for name in (
                    "hooks", "memories", "shell_tool", "unified_exec", "view_image", "goals", "apps", "plugins",
                    "image_generation", "browser_use", "computer_use", "sleep_tool", "skill_search", "tool_suggest",
                    "in_app_browser", "shell_snapshot", "daemon_auto_start", "unbounded_connection_retries",
                )
            },
            "agents": {"enabled": False},
            "tools": {"experimental_request_user_input": {"enabled": False}},
        }
        return config

    def send(self, messages: list[dict[str, str]], schema: type[BaseModel], timeout: float) -> ModelReply:
        """Run ``codex exec`` once; the last message (``-o``) is the answer."""
        import tomlkit

        executable = self.executable or find_cli(self.backend)
        if executable is None:
            raise _not_found(self.backend)
        system, prompt = model_prompt(messages)
        with tempfile.TemporaryDirectory(prefix="mnemolog-codex-") as folder:
            home, work = Path(folder) / "home", Path(folder) / "work"
            home.mkdir()
            work.mkdir()
            (home / "instructions.md").write_text(system, encoding="utf-8")
            (home / "config.toml").write_text(tomlkit.dumps(self.config(home / "instructions.md")), encoding="utf-8")
            (home / "schema.json").write_text(json.dumps(strict_schema(schema)), encoding="utf-8")
            auth = _AuthCopy(self.user_home() / "auth.json", home / "auth.json")
            command = [
                executable, "exec", "--ephemeral", "--json",
                "--output-schema", str(home / "schema.json"), "-o", str(home / "answer.json"),
                "--skip-git-repo-check", "--sandbox", "read-only", "--color", "never", "-",
            ]
            try:
                done = _run(self.backend, self.model, command, prompt, timeout, cwd=str(work), env=_environment({"CODEX_HOME": str(home)}))
            finally:
                auth.copy_back()
            answer = (home / "answer.json").read_text(encoding="utf-8") if (home / "answer.json").is_file() else ""
        events = [_json_line(line) for line in done.stdout.splitlines()]
        failed = [str(e.get("message") or (e.get("error") or {}).get("message") or "") for e in events if e.get("type") in ("turn.failed", "error")]
        if done.returncode != 0 or (failed and not answer.strip()):
            raise _failure(self.backend, self.model, failed[-1] if failed else (done.stderr or done.stdout))
        usage = next((e.get("usage") or {} for e in reversed(events) if e.get("type") == "turn.completed"), {})
        used = TokenUsage(input_tokens=int(usage.get("input_tokens") or 0), output_tokens=int(usage.get("output_tokens") or 0))
        return ModelReply(answer, "stop", None, used)


class _AuthCopy:
    """The user's Codex sign-in, lent to a temporary home and taken back if Codex refreshed it."""

    def __init__(self, original: Path, copy: Path) -> None:
        self.original, self.copy = original, copy
        self.before = original.read_bytes() if original.is_file() else None
        if self.before is not None:
            copy.write_bytes(self.before)
            copy.chmod(0o600)

    def copy_back(self) -> None:
        """Put a refreshed sign-in back, unless the user's own file changed meanwhile."""
        if self.before is None or not self.copy.is_file():
            return
        after = self.copy.read_bytes()
        current = self.original.read_bytes() if self.original.is_file() else None
        if after != self.before and current == self.before:
            staged = self.original.with_name(f".{self.original.name}.mnemolog")
            staged.write_bytes(after)
            staged.chmod(0o600)
            os.replace(staged, self.original)


def _json_line(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _run(backend: str, model: str, command: list[str], prompt: str, timeout: float, *, cwd: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, input=prompt, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False)
    except FileNotFoundError:
        raise _not_found(backend) from None
    except subprocess.TimeoutExpired as error:
        raise ModelError(f"{backend}:{model}: no answer within {timeout:.0f} s (the CLI was stopped); raise model_timeout", retryable=True) from error
