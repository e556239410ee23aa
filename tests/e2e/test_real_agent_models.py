"""The real ``claude`` and ``codex`` CLIs as mnemolog's model (``claude-code:…``, ``codex:…``), against the scripted server.

One module-scoped run per CLI (each real call costs about a second): a fresh
HOME with mnemolog installed into the agent (its hooks and MCP server), a
hook of the user's own that leaves a file when any hook runs, one memory item
already served-able, and a Claude Code session stating a rule. ``mnemolog run
--all`` with both phases on the CLI must extract and consolidate through it:
the requests carry the schema and the session text, no agent tools, no MCP
tools and no memory block; the rule reaches memory; the CLI wrote no session
file where the user's sessions are and ran no hook; nothing was served.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.agent_model_server import AgentModelServer, Recorded, Reply, ToolCall
from support.agent_sessions import ClaudeSession
from support.cli import Result, run_cli
from support.memory_model import RULE, answer_for
from support.real_agents import CLAUDE_KEY, AgentWorld, snapshot

SEEDED = "seeded-note-qq4: the release train leaves on Fridays"
AGENT_TOOLS = ("Bash", "Read", "Edit", "Write", "exec_command", "shell", "apply_patch", "mcp__")


def _schema(request: Recorded) -> dict[str, Any]:
    if request.wire == "responses":
        return dict(request.body.get("text", {}).get("format", {}).get("schema") or {})
    tool = next((t for t in request.body.get("tools", []) if t.get("name") == "StructuredOutput"), {})
    return dict(tool.get("input_schema") or {})


def _answer(request: Recorded) -> dict[str, Any] | None:
    return answer_for(_schema(request), request.text)


def scripted_model(request: Recorded) -> Reply:
    """Answers the schema it is given: Claude Code through its StructuredOutput tool, Codex as the message."""
    if request.wire == "messages" and any(part.get("type") == "tool_result" for m in request.body.get("messages", [])
                                          if isinstance(m.get("content"), list) for part in m["content"]):
        return Reply(text="Done.")
    answer = _answer(request)
    if answer is None:
        return Reply(text="Session")
    if request.wire == "messages":
        return Reply(tool_call=ToolCall("StructuredOutput", answer))
    return Reply(text=json.dumps(answer))


@dataclass
class CliRun:
    """What one ``mnemolog run --all`` through an agent CLI did and left."""

    world: AgentWorld
    requests: list[Recorded]
    result: Result
    items: list[Any]
    sessions_before: dict[str, bytes]
    sessions_after: dict[str, bytes]
    hook_ran: bool


def _mnemolog(world: AgentWorld, *args: str, **env: str) -> Result:
    return run_cli(*args, env={**world.env, **env}, cwd=world.project_a)


def _claude_world(world: AgentWorld) -> Path:
    (world.home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []}}))
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    ran = world.root / "hook-ran"
    hook = {"hooks": [{"type": "command", "command": f"touch {ran}"}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [hook], "SessionEnd": [hook], "UserPromptSubmit": [hook]}}))
    assert _mnemolog(world, "install", "claude-code").code == 0
    return world.home / ".claude" / "projects"


def _codex_world(world: AgentWorld) -> Path:
    codex_home = world.home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        f'model = "scripted-model"\nmodel_provider = "local"\napproval_policy = "never"\n\n'
        f'[model_providers.local]\nname = "local"\nbase_url = "{world.server.base_url}/v1"\nenv_key = "LOCAL_API_KEY"\nwire_api = "responses"\n\n'
        '[features]\ndaemon_auto_start = false\n'
    )
    assert _mnemolog(world, "install", "codex").code == 0
    return codex_home / "sessions"


def _run_through(backend: str, root: Path, bin_dir: Path) -> CliRun:
    with AgentModelServer(scripted_model) as server:
        world = AgentWorld(root, bin_dir, server)
        sessions = _claude_world(world) if backend == "claude-code" else _codex_world(world)
        assert _mnemolog(world, "note", SEEDED).code == 0
        seeded = _mnemolog(world, "consolidate", MNEMOLOG_CONSOLIDATE_MODEL="heuristic")
        assert seeded.code == 0, seeded.err
        start = datetime.now(UTC) - timedelta(days=2)
        session = ClaudeSession(7, start, str(world.project_a)).user(RULE).say("I will run make lint-zz8 before every push.")
        written = session.write(world.root)  # <root>/claude/<encoded cwd>/<id>.jsonl
        projects = world.home / ".claude" / "projects" / written.parent.name
        projects.mkdir(parents=True, exist_ok=True)
        written.rename(projects / written.name)
        before = snapshot(sessions) if sessions.exists() else {}
        server.requests.clear()
        model = "claude-code:sonnet" if backend == "claude-code" else "codex:scripted-model"
        result = _mnemolog(world, "run", "--all", "--json", MNEMOLOG_EXTRACT_MODEL=model, MNEMOLOG_CONSOLIDATE_MODEL=model)
        after = snapshot(sessions) if sessions.exists() else {}
        return CliRun(world, list(server.requests), result, world.items(), before, after, (root / "hook-ran").exists())


@pytest.fixture(scope="module")
def cli_runs(tmp_path_factory: pytest.TempPathFactory, agent_bin: Path) -> Iterator[dict[str, CliRun]]:
    """One run per CLI, shared by the tests of this module."""
    yield {backend: _run_through(backend, tmp_path_factory.mktemp(backend), agent_bin) for backend in ("claude-code", "codex")}


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_run_extracts_and_consolidates_through_the_cli(cli_runs: dict[str, CliRun], backend: str) -> None:
    run = cli_runs[backend]
    assert run.result.code == 0, run.result.out + run.result.err
    rule = [i for i in run.items if "lint-zz8" in i.text]
    assert len(rule) == 1 and rule[0].kind == "preference", ([i.text for i in run.items], run.result.out[-3000:], [(r.path, r.text[:300]) for r in run.requests])
    wire = "messages" if backend == "claude-code" else "responses"
    asked = [r for r in run.requests if r.wire == wire and _schema(r).get("properties")]
    kinds = [sorted(_schema(r)["properties"]) for r in asked]
    assert ["raw_memory", "rollout_slug", "rollout_summary"] in kinds and ["edits", "user_profile"] in kinds, kinds


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_requests_carry_schema_and_session_and_nothing_of_an_agent(cli_runs: dict[str, CliRun], backend: str) -> None:
    run = cli_runs[backend]
    assert run.requests
    extraction = next(r for r in run.requests if "rollout_summary" in _schema(r).get("properties", {}))
    assert "make lint-zz8 before you push" in extraction.text
    assert SEEDED not in extraction.text
    for request in run.requests:
        assert "mnemolog-memory" not in request.text
        names = request.tool_names
        # Claude Code carries the schema as its one StructuredOutput tool (and an inert placeholder); Codex has none.
        assert set(names) <= {"StructuredOutput", "DeferredToolPlaceholder"}, names
        assert not any(name.startswith(AGENT_TOOLS) for name in names), names


@pytest.mark.parametrize("backend", ["claude-code", "codex"])
def test_the_calls_leave_no_session_run_no_hook_and_serve_nothing(cli_runs: dict[str, CliRun], backend: str) -> None:
    run = cli_runs[backend]
    assert run.sessions_after == run.sessions_before  # no session file where the user's sessions are
    assert not run.hook_ran
    assert all(item.served_count == 0 for item in run.items)
    rerun = _mnemolog(run.world, "ingest", "--json")
    assert rerun.code == 0 and rerun.json()["new"] == 0, rerun.out
