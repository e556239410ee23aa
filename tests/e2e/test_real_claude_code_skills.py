"""Claude Code 2.1 as it is (``claude -p``) is offered mnemolog's skills: user-wide ones everywhere, a project's only there.

The skills are made by mnemolog's own pipeline: project A's from two real
Claude Code sessions in A that ran the same three ``make`` steps (captured by
the installed ``SessionEnd`` hook: ingest, phase 1, the skill rule of phase 2);
project B's and the user's from notes asking for a skill. After
``mnemolog install claude-code``, the request the real Claude Code sends from
a session in A offers the user-wide skill in its Skill tool listing (from
``~/.claude/skills``), and A's skill (name and description, in the
SessionStart context), never B's; a session in B the other way round. With
``--project-skills-in-repo`` the hook writes A's skill into A's
``.claude/skills`` and asks Claude Code to list skills again, so A's skill is in
the Skill tool listing of A's session (not of B's), and when the model invokes
it, SKILL.md's steps come back as the tool result. Uninstall takes out every
skill folder mnemolog wrote and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from support.agent_model_server import Recorded, Reply, ToolCall
from support.real_agents import CLAUDE_KEY, AgentWorld, MemoryUsingModel

A_STEPS = ("make build-q7", "make push-q7", "make smoke-q7")
MAKEFILE = "build-q7:\n\t@echo built\npush-q7:\n\t@echo pushed\nsmoke-q7:\n\t@echo smoke ok\n"
B_SKILL = "ship-beta-z5"
B_NOTE = f"Skill {B_SKILL}: run `make pack-z5`, then `make upload-z5`"
USER_SKILL = "tidy-user-q8"
USER_NOTE = f"Skill {USER_SKILL}: run `ruff format`, then `ruff check --fix`"
RELEASE = "Release alpha, please."
LISTING = "The following skills are available for use with the Skill tool"


def skill_listing(request: Recorded) -> str:
    """The Skill tool's listing Claude Code put into the request ("- name: description" lines)."""
    texts = [block.get("text", "") for m in request.body.get("messages", []) if isinstance(m.get("content"), list) for block in m["content"] if isinstance(block, dict)]
    return "\n".join(text for text in texts if LISTING in text)


def prompt_of(request: Recorded) -> str:
    """The prompt the session was started with (the first message's last text; the context comes before it)."""
    messages = request.body.get("messages") or [{}]
    content = messages[0].get("content", "")
    if isinstance(content, str):
        return content
    texts = [block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"]
    return texts[-1] if texts else ""


@dataclass
class SkillUsingModel:
    """Answers "ok"; with ``invoke`` set and that skill listed, calls the Skill tool for it first."""

    invoke: str | None = None
    calls: list[str] = field(default_factory=list)

    def __call__(self, request: Recorded) -> Reply:
        if not request.is_main_turn:
            return Reply(text="ok")
        done = request.tool_outputs()
        if prompt_of(request) == RELEASE and len(done) < len(A_STEPS):
            return Reply(tool_call=ToolCall("Bash", {"command": A_STEPS[len(done)], "description": "release step"}))
        if done:
            return Reply(text="ok")
        if self.invoke and "Skill" in request.tool_names and f"- {self.invoke}:" in skill_listing(request):
            self.calls.append(self.invoke)
            return Reply(tool_call=ToolCall("Skill", {"skill": self.invoke}))
        return Reply(text="ok")


def first_turn(world: AgentWorld, cwd: Path, prompt: str = "Ship it.") -> list[Recorded]:
    seen = len(world.server.requests)
    world.run_agent(["claude", "-p", prompt, "--allowedTools", "mcp__mnemolog", "Skill", "Bash", "--model", "claude-sonnet-4-5"], cwd=cwd)
    turns = [r for r in world.server.requests[seen:] if r.wire == "messages" and r.is_main_turn]
    assert turns, "Claude Code sent no request"
    return turns


def test_claude_code_is_offered_its_projects_skills_and_the_users_never_another_projects(agent_world: tuple[AgentWorld, MemoryUsingModel]) -> None:
    world, _ = agent_world
    model = SkillUsingModel()
    world.server.script = model
    claude_json = world.home / ".claude.json"
    claude_json.write_text(json.dumps({"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [CLAUDE_KEY[-20:]], "rejected": []}}) + "\n")
    own = world.home / ".claude" / "skills" / "my-own"  # the user's own skill: never touched
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text("---\nname: my-own\ndescription: Mine.\n---\nMine.\n")

    (world.project_a / "Makefile").write_text(MAKEFILE)

    # B's and the user's skills from notes asking for one (the skill rule of `consolidate`).
    assert world.mnemolog("note", B_NOTE, "--scope", "project", cwd=world.project_b).code == 0
    assert world.mnemolog("note", USER_NOTE, "--scope", "global").code == 0
    assert world.mnemolog("consolidate").code == 0

    dry = world.mnemolog("install", "claude-code", "--dry-run")
    assert dry.code == 0 and f"would write {USER_SKILL}" in dry.out and f"name: {USER_SKILL}" in dry.out
    assert not (world.home / ".claude" / "skills" / USER_SKILL).exists()
    installed = world.mnemolog("install", "claude-code")
    assert installed.code == 0, installed.err
    user_skills = world.home / ".claude" / "skills"
    assert sorted(p.name for p in user_skills.iterdir()) == ["my-own", USER_SKILL]  # no project's skill in the user folder
    assert (user_skills / USER_SKILL / ".mnemolog-skill").is_file() and not (world.project_a / ".claude").exists()

    # A's skill: two real sessions in A run the same three steps; the SessionEnd hook captures each.
    for _ in range(2):
        first_turn(world, world.project_a, RELEASE)
    world.wait_for_capture(2)
    skills = {i.skill.name: i for i in world.items() if i.kind == "skill"}
    a_skills = [name for name, item in skills.items() if item.scope == "git:example.com/acme/alpha"]
    assert len(a_skills) == 1 and len(skills) == 3, {n: (i.scope, i.text) for n, i in skills.items()}
    a_skill = a_skills[0]
    assert [step.command for step in skills[a_skill].skill.steps] == list(A_STEPS)
    assert len(skills[a_skill].evidence) == 2
    assert sorted(p.name for p in user_skills.iterdir()) == ["my-own", USER_SKILL]

    # A session in A: the user's skill in the Skill tool listing, A's skill in what it was given, never B's.
    a_turn = first_turn(world, world.project_a)[0]
    assert f"- {USER_SKILL}: " in skill_listing(a_turn) and "- my-own: Mine." in skill_listing(a_turn)
    assert f"[skill] {a_skill}: " in a_turn.text and "`make smoke-q7`" in a_turn.text  # the SessionStart context
    assert B_SKILL not in a_turn.text and "pack-z5" not in a_turn.text

    # Opted in: A's skill becomes a real skill of A's repository, listed for the Skill tool and invoked.
    assert world.mnemolog("install", "claude-code", "--project-skills-in-repo").code == 0
    model.invoke = a_skill
    turns = first_turn(world, world.project_a)
    assert f"- {a_skill}: " in skill_listing(turns[0]) and B_SKILL not in turns[0].text
    assert model.calls == [a_skill]
    # The tool result says the skill launched; SKILL.md (its steps) comes with it, in the same user turn.
    answered = turns[-1].body["messages"][-1]
    assert any(f"Launching skill: {a_skill}" in out for out in turns[-1].tool_outputs())
    assert "1. `make build-q7`" in json.dumps(answered) and "3. `make smoke-q7`" in json.dumps(answered), answered
    assert (world.project_a / ".claude" / "skills" / a_skill / ".mnemolog-skill").is_file()
    assert sorted(p.name for p in (world.project_a / ".claude" / "skills").iterdir()) == [a_skill]
    # ... and a session in B the other way round: B's skill (now in B's repository) and the user's, never A's.
    b_turn = first_turn(world, world.project_b)[0]
    assert f"- {B_SKILL}: " in skill_listing(b_turn) and f"- {USER_SKILL}: " in skill_listing(b_turn)
    assert a_skill not in b_turn.text and "build-q7" not in b_turn.text and model.calls == [a_skill]
    assert sorted(p.name for p in (world.project_b / ".claude" / "skills").iterdir()) == [B_SKILL]

    # Kept in step: a new user-wide skill reaches the user folder at the next consolidation.
    assert world.mnemolog("note", "Skill lint-user-k2: run `ruff check`, then `mypy .`", "--scope", "global").code == 0
    assert world.mnemolog("consolidate").code == 0
    assert (user_skills / "lint-user-k2" / "SKILL.md").is_file()

    removed = world.mnemolog("install", "claude-code", "--uninstall")
    assert removed.code == 0, removed.err
    assert sorted(p.name for p in user_skills.iterdir()) == ["my-own"]
    assert not (world.project_a / ".claude").exists() and not (world.project_b / ".claude").exists()
