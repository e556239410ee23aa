"""`doctor --model` for the anthropic, claude-code and codex backends: found, version, signed in, schema, speed.

Exit codes: 0 when each model answered in its schema, 1 when one could not
be asked (CLI not found, not signed in, request failed), 3 when an answer
ignored the schema.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.agent_model_server import AgentModelServer, Recorded, Reply, ToolCall
from support.cli import Result, run_cli
from support.memory_model import answer_for
from support.real_agents import CLAUDE_KEY

AGENT_VERSIONS = {"claude-code": "2.1.328", "codex": "0.169.0"}


def probe_model(request: Recorded) -> Reply:
    """Answers the probe: Messages through the tool it is offered, Responses as text."""
    if request.wire == "responses":
        schema = request.body.get("text", {}).get("format", {}).get("schema") or {}
        return Reply(text=json.dumps(answer_for(schema, request.text)))
    if any(isinstance(m.get("content"), list) and any(p.get("type") == "tool_result" for p in m["content"]) for m in request.body.get("messages", [])):
        return Reply(text="Done.")
    tools = request.body.get("tools") or []
    tool = next((t for t in tools if t.get("name") in ("answer", "StructuredOutput")), None)
    if tool is None:
        return Reply(text="Session")
    return Reply(tool_call=ToolCall(tool["name"], answer_for(tool["input_schema"], request.text) or {}))


@pytest.fixture
def server() -> Iterator[AgentModelServer]:
    with AgentModelServer(probe_model) as running:
        yield running


def _doctor(tmp_path: Path, model: str, path: str, **extra: str) -> Result:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOLOG_", "OPENAI_", "ANTHROPIC_", "CODEX_", "CLAUDE_"))}
    env = {**keep, "HOME": str(home), "MNEMOLOG_HOME": str(tmp_path / "store"), "PATH": path,
           "MNEMOLOG_EXTRACT_MODEL": model, "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", **extra}
    return run_cli("doctor", "--model", "--json", env=env)


def _bare_path() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])


def test_anthropic_answers_in_its_schema(tmp_path: Path, server: AgentModelServer) -> None:
    done = _doctor(tmp_path, "anthropic:claude-test-1", _bare_path(), ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="k")

    assert done.code == 0, done.out + done.err
    extract = done.json()["models"][0]
    assert extract["model"] == "anthropic:claude-test-1" and extract["server"]["kind"] == "anthropic"
    assert extract["schema_honoured"] is True and extract["tokens_per_second"] > 0
    assert server.requests[0].body["tool_choice"] == {"type": "tool", "name": "answer"}


def test_anthropic_with_a_bad_key_fails_with_one_line(tmp_path: Path) -> None:
    with AgentModelServer(lambda _: Reply(status=401, error="invalid x-api-key")) as server:
        done = run_cli("doctor", "--model", env={"MNEMOLOG_HOME": str(tmp_path), "MNEMOLOG_EXTRACT_MODEL": "anthropic:m",
                                                  "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic", "ANTHROPIC_BASE_URL": server.base_url})

    assert done.code == 1, done.out
    said = " ".join(done.out.split())  # the terminal's width wraps it
    assert "request failed: anthropic:m: 401 Unauthorized from the Anthropic API: invalid x-api-key (check ANTHROPIC_API_KEY" in said


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_a_cli_that_is_not_installed(tmp_path: Path, backend: str) -> None:
    done = _doctor(tmp_path, f"{backend}:some-model", _bare_path())

    assert done.code == 1, done.out + done.err
    report = done.json()["models"][0]
    command = "claude" if backend == "claude-code" else "codex"
    assert report["server"]["found"] is False and report["answered"] is False
    assert report["error"] == f"CLI not found: `{command}` is not on PATH"
    plain = run_cli("doctor", "--model", env={"MNEMOLOG_HOME": str(tmp_path / "store"), "PATH": _bare_path(),
                                             "MNEMOLOG_EXTRACT_MODEL": f"{backend}:some-model", "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic"})
    assert plain.code == 1
    assert "cli        not found on PATH; not signed in" in plain.out
    assert f"request    failed: CLI not found: `{command}` is not on PATH" in plain.out


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_a_cli_that_is_not_signed_in(tmp_path: Path, agent_bin: Path, backend: str) -> None:
    done = _doctor(tmp_path, f"{backend}:some-model", os.pathsep.join([str(agent_bin), _bare_path()]))

    assert done.code == 1, done.out + done.err
    report = done.json()["models"][0]
    assert report["server"]["found"] is True and AGENT_VERSIONS[backend] in report["server"]["version"]
    assert report["server"]["signed_in"] is False and report["error"].startswith("not signed in (")


def test_claude_code_signed_in_answers_in_its_schema(tmp_path: Path, agent_bin: Path, server: AgentModelServer) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []}}))

    done = _doctor(tmp_path, "claude-code:sonnet", os.pathsep.join([str(agent_bin), _bare_path()]),
                   ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY=CLAUDE_KEY)

    assert done.code == 0, done.out + done.err
    report = done.json()["models"][0]
    assert report["server"]["signed_in"] is True and report["schema_honoured"] is True
    assert report["tokens_per_second"] is not None


def test_codex_with_a_keyed_provider_answers_in_its_schema(tmp_path: Path, agent_bin: Path, server: AgentModelServer) -> None:
    codex_home = tmp_path / "home" / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        f'model_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "{server.base_url}/v1"\n'
        'env_key = "LOCAL_API_KEY"\nwire_api = "responses"\n'
    )

    done = _doctor(tmp_path, "codex:scripted-model", os.pathsep.join([str(agent_bin), _bare_path()]), LOCAL_API_KEY="k")

    assert done.code == 0, done.out + done.err
    report = done.json()["models"][0]
    assert report["server"]["signed_in"] is True and report["schema_honoured"] is True
    [request] = [r for r in server.requests if r.wire == "responses"]
    assert request.body["text"]["format"]["type"] == "json_schema" and request.tool_names == []
