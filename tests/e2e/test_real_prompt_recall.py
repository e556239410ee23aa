"""Prompt-time recall with the real Claude Code and the real Codex, against the scripted model server.

A chat of project A recorded a decision. With ``mnemolog install``, a prompt
that bears on it makes the UserPromptSubmit hook add the decision's excerpt
to that prompt's model request (wrapped as served memory); a prompt about
nothing remembered adds nothing (its SessionStart context may hold what the
first session's capture made of the old chat: that is not the prompt hook's);
``history --session`` shows both.
"""

from __future__ import annotations

import json
from pathlib import Path

from mnemolog.domain.prompt_recall import HEADER
from support.agent_model_server import Recorded, Reply
from support.real_agents import CLAUDE_KEY, AgentWorld, MemoryUsingModel
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout

DECISION = "ok let's cap the csv export at 5000 rows per file, the reporting database chokes above that"
ASKED = "the csv export from the reporting database is split and each file is cut short, explain it"
EVERYDAY = "fix the typo in the README"


def _remember_the_decision(world: AgentWorld) -> None:
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import open_store

    store = open_store(Settings(home=world.mnemolog_home))
    try:
        path = write_rollout(world.root / "old-sessions", thread_id(7), DECISION, cwd=str(world.project_a), remote="https://example.com/acme/alpha.git")
        ingest_files(store, [path])
    finally:
        store.close()


def _answer(request: Recorded) -> Reply:
    return Reply(text="Noted.")


def _served(world: AgentWorld, session: str) -> list[str]:
    done = world.mnemolog("history", "--session", session)
    assert done.code == 0, done.err
    return [line for line in done.out.splitlines() if "hook:prompt" in line or line.strip().startswith("history:")]


def _check(world: AgentWorld, wire: str, run: callable, sessions: callable) -> None:  # type: ignore[valid-type]
    seen = len(world.server.requests)
    run(ASKED)
    asked = [r for r in world.server.requests[seen:] if r.wire == wire and r.is_main_turn]
    assert asked and "5000 rows" in asked[0].text and "<mnemolog-memory>" in asked[0].text, "the decision reaches the prompt's request"
    assert f"history:{thread_id(7)}:0" in asked[0].text
    # The first session's capture runs the pipeline, which may make the old chat's decision an item that the next
    # session's SessionStart context holds: wait for it, so the next prompt's request shows only what its hook added.
    world.wait_for_capture(1)
    seen = len(world.server.requests)
    run(EVERYDAY)
    everyday = [r for r in world.server.requests[seen:] if r.wire == wire and r.is_main_turn]
    assert everyday and HEADER not in everyday[0].text and f"history:{thread_id(7)}" not in everyday[0].text, "the prompt hook added nothing"
    first, second = sessions()
    assert any("1 excerpt(s)" in line for line in _served(world, first)) and any(f"history:{thread_id(7)}:0" in line for line in _served(world, first))
    quiet = _served(world, second)
    assert quiet and all("0 tokens, 0 item(s)" in line for line in quiet), quiet
    # Read back, what the hook added is served memory: never part of the session's own history.
    world.wait_for_capture(2)
    found = world.mnemolog("search", "csv export reporting database 5000 rows", "--only", "history", "--json")
    assert found.code == 0, found.err
    texts = [h["text"] for h in found.json()["hits"]]
    assert any(DECISION in t for t in texts) and not any("Recalled for this prompt" in t for t in texts), texts


def test_claude_codes_prompt_hook_adds_the_decision_to_that_prompt_only(agent_world: tuple[AgentWorld, MemoryUsingModel]) -> None:
    world, _ = agent_world
    world.server.script = _answer
    (world.home / ".claude").mkdir()
    state = {"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []}}
    (world.home / ".claude.json").write_text(json.dumps(state))
    _remember_the_decision(world)
    assert world.mnemolog("install", "claude-code").code == 0

    def run(prompt: str) -> None:
        world.run_agent(["claude", "-p", prompt, "--model", "claude-sonnet-4-5"], cwd=world.project_a)

    def sessions() -> list[str]:
        files = sorted((world.home / ".claude" / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [p.stem for p in files if p.parent.parent.name == "projects"]

    _check(world, "messages", run, sessions)


def test_codexs_prompt_hook_adds_the_decision_to_that_prompt_only(agent_world: tuple[AgentWorld, MemoryUsingModel]) -> None:
    from test_real_codex import codex_config

    world, _ = agent_world
    world.server.script = _answer
    codex_home = world.home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(codex_config(world))
    _remember_the_decision(world)
    installed = world.mnemolog("install", "codex")
    assert installed.code == 0 and "(3 hooks)" in installed.out, installed.out

    def run(prompt: str) -> None:
        world.run_agent(["codex", "exec", prompt], cwd=world.project_a)

    def sessions() -> list[str]:
        files = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)
        return [Path(p).stem[-36:] for p in files]

    _check(world, "responses", run, sessions)
