"""Claude Code 2.1 as it is (``claude -p``), against the scripted Messages server, with ``mnemolog install claude-code``.

The same story as for Codex: install, a session in project A states a rule,
the SessionEnd hook captures it, the next session in A receives A's memory
(not B's) from the SessionStart hook, calls mnemolog's MCP search, gets A's
item and cites it, and the citation raises the item's usage rank. What
mnemolog served never becomes an item; uninstall restores the user's files
byte for byte (``~/.claude.json``, which Claude Code itself rewrites on every
start, gets mnemolog's server taken out and keeps what Claude Code wrote).
"""

from __future__ import annotations

import json

from support.real_agents import CLAUDE_KEY, AgentWorld, MemoryUsingModel

RULE = "Always run the linter with make lint-strict-c3 before you push."
B_SECRET = "beta-only-zq9 deploy keys live in the vault"


def claude(prompt: str) -> list[str]:
    return ["claude", "-p", prompt, "--allowedTools", "mcp__mnemolog", "--model", "claude-sonnet-4-5"]


def test_claude_code_session_memory_reaches_the_next_session_of_its_project_only(agent_world: tuple[AgentWorld, MemoryUsingModel]) -> None:
    world, model = agent_world
    claude_json = world.home / ".claude.json"
    settings = world.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    user_state = {"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []}}
    claude_json.write_text(json.dumps(user_state, indent=2) + "\n")
    settings.write_text('{\n  "permissions": {"allow": ["Bash(ls:*)"]},\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}\n')
    originals = {path: path.read_bytes() for path in (claude_json, settings)}

    # Installing and uninstalling at once gives back every file byte for byte.
    assert world.mnemolog("install", "claude-code").code == 0
    assert world.mnemolog("install", "claude-code", "--uninstall").code == 0
    assert {path: path.read_bytes() for path in originals} == originals

    dry = world.mnemolog("install", "claude-code", "--dry-run")
    assert dry.code == 0 and "+++ " in dry.out and "SessionStart" in dry.out
    assert {path: path.read_bytes() for path in originals} == originals
    installed = world.mnemolog("install", "claude-code")
    assert installed.code == 0, installed.err
    config = json.loads(settings.read_text())
    assert config["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "true"}]}]  # the user's hook stays
    assert json.loads(claude_json.read_text())["mcpServers"]["mnemolog"]["command"].startswith("/")

    assert world.mnemolog("note", B_SECRET, cwd=world.project_b).code == 0
    assert world.mnemolog("consolidate", cwd=world.project_b).code == 0

    # Session 1 in A states a rule; captured by the SessionEnd hook.
    world.run_agent(claude(RULE), cwd=world.project_a)
    first = world.server.main_requests("messages")
    assert first and "mnemolog-memory" not in first[0].text
    world.wait_for_capture(1)
    rule_items = [i for i in world.items() if "lint-strict-c3" in i.text and i.kind == "preference"]
    assert len(rule_items) == 1 and rule_items[0].use_count == 0, [i.text for i in world.items()]
    item_id = str(rule_items[0].item_id)
    remembered = sorted(i.text for i in world.items() if "lint-strict-c3" in i.text)

    # Session 2 in A: A's memory and not B's; the model searches memory and cites the item.
    model.query = "linter push"
    seen = len(world.server.requests)
    done = world.run_agent(claude("How should I check my code here?"), cwd=world.project_a)
    second = [r for r in world.server.requests[seen:] if r.wire == "messages" and r.is_main_turn]
    assert "lint-strict-c3" in second[0].text and f"[item:{item_id}]" in second[0].text
    assert "beta-only-zq9" not in " ".join(r.text for r in world.server.requests[seen:])
    assert "mcp__mnemolog__search_memory" in second[0].tool_names
    answers = [out for r in second for out in r.tool_outputs()]
    assert any(item_id in out and "lint-strict-c3" in out for out in answers), answers
    assert f"[item:{item_id}]" in done.stdout
    world.wait_for_capture(2)
    ranks = {h["id"]: h["use_count"] for h in world.mnemolog("search", "lint-strict-c3", "--only", "items", "--json").json()["hits"]}
    assert ranks[item_id] >= 1

    # The MCP answer is kept as served memory, never shown to phase 1; re-running adds no item from it.
    transcript = sorted((world.home / ".claude" / "projects").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-1]
    stored, shown = world.session_items("claude-code", transcript.stem)
    assert any(i.kind == "context" and i.tool == "mcp__mnemolog__search_memory" for i in stored)
    assert not any("lint-strict-c3" in i.text for i in shown)
    rerun = world.mnemolog("run", "--all", "--json")
    assert rerun.code == 0, rerun.err
    assert sorted(i.text for i in world.items() if "lint-strict-c3" in i.text) == remembered

    removed = world.mnemolog("install", "claude-code", "--uninstall")
    assert removed.code == 0, removed.err
    assert settings.read_bytes() == originals[settings]
    now = json.loads(claude_json.read_text())
    assert "mnemolog" not in now.get("mcpServers", {})
    assert {k: now[k] for k in user_state} == user_state  # Claude Code's own additions are kept
