"""Codex 0.169 as it is (``codex exec``), against the scripted Responses server, with ``mnemolog install codex``.

One story, in a fresh HOME: install (trusting the hooks through Codex's
app-server), a session in project A states a rule, the SessionEnd hook
captures it, the next session in A receives A's memory (and not B's) from the
SessionStart hook, the model searches memory through mnemolog's MCP tools,
gets A's item and cites it, and the citation raises the item's usage rank.
What mnemolog served never becomes an item; Codex's own memory folder is
never touched; uninstall restores the config byte for byte.
"""

from __future__ import annotations

import json

from support.real_agents import AgentWorld, MemoryUsingModel, snapshot

RULE = "Always run the tests with make check-fast-a7 before you commit."
B_SECRET = "beta-only-zq9 deploy keys live in the vault"
USER_SKILL_NOTE = "Skill tidy-user-c4: run `ruff format`, then `ruff check --fix`"
B_SKILL_NOTE = "Skill ship-beta-c5: run `make pack-c5`, then `make upload-c5`"
A_SKILL_NOTE = "Skill docs-alpha-c6: run `make docs-c6`, then `make publish-c6`"


def codex_config(world: AgentWorld) -> str:
    return f'''# my own Codex settings
model = "scripted-model"
model_provider = "local"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.local]
name = "local"
base_url = "{world.server.base_url}/v1"
env_key = "LOCAL_API_KEY"
wire_api = "responses"

[features]
daemon_auto_start = false
'''


def test_codex_session_memory_reaches_the_next_session_of_its_project_only(agent_world: tuple[AgentWorld, MemoryUsingModel]) -> None:
    world, model = agent_world
    codex_home = world.home / ".codex"
    (codex_home / "memories" / "rollout_summaries").mkdir(parents=True)
    (codex_home / "memories" / "raw_memories.md").write_text("Codex's own raw memories\n")
    (codex_home / "memories" / "rollout_summaries" / "own.md").write_text("Codex's own summary\n")
    (codex_home / "config.toml").write_text(codex_config(world))
    original = (codex_home / "config.toml").read_bytes()
    codex_memories = snapshot(codex_home / "memories")

    installed = world.mnemolog("install", "codex")
    assert installed.code == 0, installed.err
    assert "trusted by" in installed.out and "(3 hooks)" in installed.out
    hooks = json.loads((codex_home / "hooks.json").read_text())
    commands = [h["command"] for groups in hooks["hooks"].values() for g in groups for h in g["hooks"]]
    assert all(str(world.mnemolog_home) in c and "/mnemolog " in c and c.split()[1].startswith("/") for c in commands)
    assert world.mnemolog("install", "codex").out.startswith("codex: already installed")

    # Project B has memory of its own.
    assert world.mnemolog("note", B_SECRET, cwd=world.project_b).code == 0
    assert world.mnemolog("consolidate", cwd=world.project_b).code == 0

    # Session 1 in A states a rule; nothing is remembered for A yet, so the hook adds nothing.
    world.run_agent(["codex", "exec", RULE], cwd=world.project_a)
    first = world.server.main_requests("responses")
    assert first and "mnemolog-memory" not in first[0].text
    world.wait_for_capture(1)
    rule_items = [i for i in world.items() if "check-fast-a7" in i.text and i.kind == "preference"]
    assert len(rule_items) == 1, [i.text for i in world.items()]
    assert {i.scope for i in rule_items} == {"git:example.com/acme/alpha"}
    item_id = str(rule_items[0].item_id)
    remembered = sorted(i.text for i in world.items() if "check-fast-a7" in i.text)
    assert rule_items[0].use_count == 0
    # A user-wide skill and one of project B's, made by the skill rule from notes; the consolidation that
    # makes them puts the user-wide one into $CODEX_HOME/skills (install keeps it in step).
    assert world.mnemolog("note", USER_SKILL_NOTE, "--scope", "global").code == 0
    assert world.mnemolog("note", B_SKILL_NOTE, "--scope", "project", cwd=world.project_b).code == 0
    assert world.mnemolog("note", A_SKILL_NOTE, "--scope", "project", cwd=world.project_a).code == 0
    assert world.mnemolog("consolidate").code == 0
    assert (codex_home / "skills" / "tidy-user-c4" / "SKILL.md").is_file()

    # Session 2 in A: the request carries A's memory and not B's; the model searches and cites.
    model.query = "tests commit"
    seen = len(world.server.requests)
    done = world.run_agent(["codex", "exec", "How should I run the tests here?"], cwd=world.project_a)
    second = [r for r in world.server.requests[seen:] if r.wire == "responses"]
    assert "check-fast-a7" in second[0].text and f"[item:{item_id}]" in second[0].text
    assert "beta-only-zq9" not in " ".join(r.text for r in second)
    # Codex lists the user-wide skill ($CODEX_HOME/skills) with its own skills, never B's.
    assert "- tidy-user-c4: " in second[0].text and "(file: " in second[0].text
    assert "[skill] docs-alpha-c6: " in second[0].text and "`make publish-c6`" in second[0].text  # A's, in its context
    assert "ship-beta-c5" not in " ".join(r.text for r in world.server.requests)
    assert "mcp__mnemolog.search_memory" in second[0].tool_names
    answers = [out for r in second for out in r.tool_outputs()]
    assert any(item_id in out and "check-fast-a7" in out for out in answers), answers
    assert f"[item:{item_id}]" in done.stdout
    world.wait_for_capture(2)
    ranks = {h["id"]: h["use_count"] for h in world.mnemolog("search", "check-fast-a7", "--only", "items", "--json").json()["hits"]}
    assert ranks[item_id] >= 1  # the citation in the answer raised the item's usage rank

    # What mnemolog served (hook output, the MCP answer) is never new knowledge.
    rollout = sorted((codex_home / "sessions").rglob("*.jsonl"))[-1]
    native = json.loads(rollout.read_text().splitlines()[0])["payload"]["id"]
    stored, shown = world.session_items("codex", native)
    assert any(i.kind == "context" and i.tool == "mcp__mnemolog__search_memory" for i in stored)
    assert not any("check-fast-a7" in i.text for i in shown)
    rerun = world.mnemolog("run", "--all", "--json")
    assert rerun.code == 0, rerun.err
    assert sorted(i.text for i in world.items() if "check-fast-a7" in i.text) == remembered

    # Codex's own memory folder is as it was; uninstall restores the config byte for byte.
    assert snapshot(codex_home / "memories") == codex_memories
    removed = world.mnemolog("install", "codex", "--uninstall")
    assert removed.code == 0, removed.err
    assert "restored byte for byte" in removed.out
    assert (codex_home / "config.toml").read_bytes() == original
    assert not (codex_home / "hooks.json").exists()
    assert not (codex_home / "skills" / "tidy-user-c4").exists()
