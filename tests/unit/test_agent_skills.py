"""The skill folders ``install claude-code`` keeps: what a sync writes, keeps and removes (files on a temp folder)."""

from __future__ import annotations

import json
from pathlib import Path

from mnemolog.adapters.agent_skills import (
    MARKER,
    apply_sync,
    owned_skills,
    plan_removal,
    plan_sync,
)
from mnemolog.adapters.hook_json import hook_answer


def skill(name: str, steps: str = "1. `make it`") -> str:
    return f"---\nname: {name}\ndescription: \"Use when {name}\"\n---\n\n# {name}\n\n## Steps\n\n{steps}\n"


def test_sync_writes_marked_folders_keeps_the_users_own_and_removes_only_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    (folder / "mine").mkdir(parents=True)
    (folder / "mine" / "SKILL.md").write_text(skill("mine"))
    (folder / "deploy").mkdir()
    (folder / "deploy" / "SKILL.md").write_text("the user's own deploy skill\n")

    first = plan_sync(folder, {"tidy": skill("tidy"), "deploy": skill("deploy")})
    assert first.kept_users == ["deploy"] and first.changes
    assert first.as_dict()["written"] == ["tidy"]
    assert not (folder / "tidy").exists()  # planning writes nothing
    apply_sync(first)
    assert (folder / "tidy" / "SKILL.md").read_text() == skill("tidy") and (folder / "tidy" / MARKER).is_file()
    assert (folder / "deploy" / "SKILL.md").read_text() == "the user's own deploy skill\n"
    assert owned_skills(folder) == ["tidy"]

    assert not plan_sync(folder, {"tidy": skill("tidy")}).changes  # in step: nothing to do

    revised = plan_sync(folder, {"tidy": skill("tidy", "1. `ruff format`")})
    assert [e.path.name for e in revised.edits if e.changes] == ["SKILL.md"] and "+1. `ruff format`" in revised.edits[0].diff()
    apply_sync(revised)

    (folder / "tidy" / "script.sh").write_text("echo kept\n")  # something else in mnemolog's folder stays
    gone = plan_sync(folder, {})
    assert gone.as_dict()["removed"] == ["tidy"]
    apply_sync(gone)
    assert sorted(p.name for p in folder.iterdir()) == ["deploy", "mine", "tidy"]
    assert sorted(p.name for p in (folder / "tidy").iterdir()) == ["script.sh"] and owned_skills(folder) == []


def test_removal_takes_every_marked_folder_and_the_folders_it_created_when_empty(tmp_path: Path) -> None:
    folder = tmp_path / "repo" / ".claude" / "skills"
    apply_sync(plan_sync(folder, {"a": skill("a"), "b": skill("b")}))
    assert owned_skills(folder) == ["a", "b"]
    removal = plan_removal(folder)
    assert {e.path.parent.name for e in removal.edits} == {"a", "b"} and all(e.after is None for e in removal.edits)
    apply_sync(removal, (folder, folder.parent))
    assert not (tmp_path / "repo" / ".claude").exists() and (tmp_path / "repo").is_dir()

    kept = tmp_path / "user" / "skills"
    (kept / "own").mkdir(parents=True)
    (kept / "own" / "SKILL.md").write_text(skill("own"))
    apply_sync(plan_sync(kept, {"a": skill("a")}))
    apply_sync(plan_removal(kept), (kept,))
    assert [p.name for p in kept.iterdir()] == ["own"]  # not empty: the folder stays


def test_a_symlinked_or_unmarked_folder_is_never_taken_for_mnemologs(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / MARKER).write_text("x")
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "linked").symlink_to(elsewhere)
    assert owned_skills(folder) == [] and plan_removal(folder).edits == []
    assert plan_sync(folder, {"linked": skill("linked")}).kept_users == ["linked"]


def test_the_hook_answer_asks_claude_code_to_list_skills_again_only_after_writing_some() -> None:
    assert hook_answer(None, False) is None
    assert hook_answer("ctx", False) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}}
    answer = hook_answer(None, True)
    assert json.loads(json.dumps(answer)) == {"hookSpecificOutput": {"hookEventName": "SessionStart", "reloadSkills": True}}
