"""`doctor --model`: one small structured request to a phase's model, and what it shows.

The request carries a strict ``json_schema`` response format, as the pipeline's
do. The report names the server (what it says of itself), the model, whether
the answer honoured the schema, how fast the tokens came, and the settings the
pipeline derives for this server (context window, input budget, output cap).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

PROBE_SYSTEM = "You answer with one JSON object and nothing else."
PROBE_USER = (
    'Reply with a JSON object with two fields: "status" set to the string "ready", and '
    '"words" set to the number of words in the phrase "memory for coding agents".\n'
    'Example of the form: {"status": "ready", "words": 7}'
)
PROBE_MAX_TOKENS = 64


class ProbeAnswer(BaseModel):
    """The answer the probe asks for."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ready"]
    words: int


@dataclass
class ProbeReport:
    """What one phase's model showed."""

    phase: str
    model: str
    base_url: str | None
    server: dict[str, Any] = field(default_factory=dict)
    fit: dict[str, Any] = field(default_factory=dict)
    ok: bool = False  # the request got an answer
    schema_honoured: bool = False
    answer: str = ""
    error: str = ""
    seconds: float = 0.0
    output_tokens: int = 0
    tokens_per_second: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "phase": self.phase,
            "model": self.model,
            "base_url": self.base_url,
            "server": self.server,
            "settings": self.fit,
            "answered": self.ok,
            "schema_honoured": self.schema_honoured,
            "answer": self.answer,
            "error": self.error or None,
            "seconds": round(self.seconds, 3),
            "output_tokens": self.output_tokens,
            "tokens_per_second": round(self.tokens_per_second, 2) if self.tokens_per_second is not None else None,
        }


def probe(phase: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> ProbeReport:
    """Send the probe to ``model`` at ``base_url`` and judge its answer."""
    import openai
    from mnemolog.adapters.model_server import discover
    from openai.lib._parsing._completions import type_to_response_format_param

    info = discover(base_url, api_key)
    report = ProbeReport(phase=phase, model=model, base_url=base_url, server=info.as_dict())
    client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=0)
    cap = "max_completion_tokens" if base_url is None else "max_tokens"
    started = time.monotonic()
    try:
        arguments: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "system", "content": PROBE_SYSTEM}, {"role": "user", "content": PROBE_USER}],
            "response_format": type_to_response_format_param(ProbeAnswer),
            cap: PROBE_MAX_TOKENS,
        }
        completion = client.chat.completions.create(**arguments)
    except openai.APIStatusError as error:
        report.error = f"HTTP {error.status_code}: {error.message}"
        return report
    except openai.APIError as error:
        report.error = f"{type(error).__name__}: {error.message}"
        return report
    finally:
        report.seconds = time.monotonic() - started
    report.ok = True
    choice = completion.choices[0] if completion.choices else None
    content = (choice.message.content or "") if choice is not None else ""
    report.answer = content[:200]
    usage = completion.usage
    report.output_tokens = getattr(usage, "completion_tokens", 0) or 0
    extra = completion.model_extra or {}
    timings = extra.get("timings") if isinstance(extra.get("timings"), dict) else {}
    rate = timings.get("predicted_per_second") if timings else None  # llama.cpp measures generation alone
    if isinstance(rate, (int, float)) and rate > 0:
        report.tokens_per_second = float(rate)
    elif report.output_tokens and report.seconds > 0:
        report.tokens_per_second = report.output_tokens / report.seconds
    _check_schema(report, content)
    return report


def probe_backend(phase: str, name: str, settings: Any) -> ProbeReport:
    """The probe through a non-OpenAI backend (``anthropic:``, ``claude-code:``, ``codex:``).

    A CLI is first looked for (path, ``--version``) and asked whether it is
    signed in (``claude auth status``, ``codex login status``); the probe is
    sent only when both hold.
    """
    from mnemolog.adapters.models import BACKENDS, model_endpoint, split_model
    from mnemolog.domain.ports import ModelError

    backend, bare = split_model(name)
    base_url = model_endpoint(settings, phase, name)[0]
    report = ProbeReport(phase=phase, model=name, base_url=base_url, server={"kind": backend})
    if backend in ("claude-code", "codex"):
        report.server |= cli_status(backend)
        if not report.server["found"]:
            report.error = f"CLI not found: `{report.server['command']}` is not on PATH"
            return report
        if not report.server["signed_in"]:
            how = "run `claude` and sign in, or set ANTHROPIC_API_KEY" if backend == "claude-code" else "run `codex login`"
            report.error = f"not signed in ({report.server['command']}: {report.server['sign_in']}); {how}"
            return report
    transport = BACKENDS[backend](settings, phase, bare)
    assert transport is not None
    messages = [{"role": "system", "content": PROBE_SYSTEM}, {"role": "user", "content": PROBE_USER}]
    started = time.monotonic()
    try:
        reply = transport.send(messages, ProbeAnswer, settings.model_timeout)
    except ModelError as error:
        report.error = str(error)
        return report
    finally:
        report.seconds = time.monotonic() - started
    report.ok = True
    report.answer = reply.content[:200]
    report.output_tokens = reply.usage.output_tokens
    if report.output_tokens and report.seconds > 0:
        report.tokens_per_second = report.output_tokens / report.seconds
    if reply.refusal:
        report.error = f"the model refused: {reply.refusal}"
        return report
    _check_schema(report, reply.content)
    return report


def cli_status(backend: str) -> dict[str, Any]:
    """Whether an agent CLI is on PATH, its version, and whether it is signed in (or keyed)."""
    import json
    import subprocess

    from mnemolog.adapters.agent_cli_models import CLI_NAMES, find_cli

    command = CLI_NAMES[backend]
    path = find_cli(backend)
    status: dict[str, Any] = {"command": command, "found": path is not None, "path": path, "version": None, "signed_in": False, "sign_in": ""}
    if path is None:
        return status

    def run(*args: str) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run([path, *args], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None

    version = run("--version")
    status["version"] = version.stdout.strip() if version is not None and version.returncode == 0 else None
    if backend == "claude-code":
        said = run("auth", "status", "--json")
        try:
            data = json.loads(said.stdout) if said is not None else {}
        except ValueError:
            data = {}
        status["signed_in"] = bool(data.get("loggedIn"))
        status["sign_in"] = f"auth method {data.get('authMethod') or 'unknown'}"
    else:
        said = run("login", "status")
        lines = [line.strip() for line in ((said.stdout or "") + "\n" + (said.stderr or "")).splitlines() if line.strip()] if said is not None else []
        text = next((line for line in reversed(lines) if not line.startswith("WARNING")), "no answer")
        keyed = _codex_keyed()
        status["signed_in"] = (said is not None and said.returncode == 0) or keyed
        status["sign_in"] = "an API key from the model provider's env_key" if keyed and not (said is not None and said.returncode == 0) else text
    return status


def _codex_keyed() -> bool:
    """True when the user's Codex model provider takes its key from a variable that is set (no sign-in needed)."""
    import os
    import tomllib
    from pathlib import Path

    path = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    provider = (config.get("model_providers") or {}).get(config.get("model_provider") or "", {})
    key = provider.get("env_key") if isinstance(provider, dict) else None
    return bool(key and os.environ.get(str(key)))


def _check_schema(report: ProbeReport, content: str) -> None:
    """Whether the probe's answer follows its JSON schema; the first broken field, if not."""
    try:
        ProbeAnswer.model_validate_json(content)
        report.schema_honoured = True
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        report.error = f"the answer does not follow the JSON schema ({where}: {first.get('msg', '')})"
