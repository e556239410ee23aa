"""``mnemolog context --hook`` on the agents' UserPromptSubmit event: recall bearing on the prompt, once per session, or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.memory import git_project
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout

DECISION = "ok let's cap the csv export at 5000 rows per file, the reporting database chokes above that"
ASKED = "the csv export of the reporting database stops at 5000 rows, why is the file cut?"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """A store holding one recorded chat of project api (the decision), and api's work tree."""
    project = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    home = tmp_path / "data"
    store = open_store(Settings(home=home))
    try:
        ingest_files(store, [write_rollout(tmp_path / "sessions", thread_id(1), DECISION, cwd=str(project))])
    finally:
        store.close()
    return {"project": project, "env": {"MNEMOLOG_HOME": str(home), "HOME": str(tmp_path / "home")}}


def prompt_hook(world: dict, prompt: str, session: str, *args: str) -> str:
    given = {"session_id": session, "cwd": str(world["project"]), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    done = run_cli("context", "--hook", *args, env=world["env"], stdin=json.dumps(given), cwd=world["project"])
    assert done.code == 0 and done.err == "", done.err
    return done.out


def test_a_prompt_about_a_past_decision_gets_it_once_and_an_everyday_prompt_gets_nothing(world: dict) -> None:
    answer = json.loads(prompt_hook(world, ASKED, "s-1", "--json", "--agent", "claude-code"))
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert output["additionalContext"].startswith("<mnemolog-memory>\n") and output["additionalContext"].rstrip().endswith("</mnemolog-memory>")
    assert "5000 rows" in output["additionalContext"] and f"history:{thread_id(1)}:0" in output["additionalContext"]

    assert prompt_hook(world, ASKED, "s-1", "--json", "--agent", "claude-code") == "", "the session has it already"
    assert prompt_hook(world, "fix the typo in the README", "s-1", "--json", "--agent", "claude-code") == ""
    plain = prompt_hook(world, ASKED, "s-2", "--agent", "codex")
    assert plain.startswith("<mnemolog-memory>") and "5000 rows" in plain

    told = run_cli("history", "--session", "s-1", env=world["env"], cwd=world["project"])
    assert told.code == 0, told.err
    lines = told.out.splitlines()
    assert sum("hook:prompt" in line for line in lines) == 3
    assert any("hook:prompt" in line and "1 excerpt(s)" in line for line in lines)
    assert f"history:{thread_id(1)}:0" in told.out


def test_prompt_recall_turned_off_or_without_a_prompt_adds_and_records_nothing(world: dict) -> None:
    off = {**world, "env": {**world["env"], "MNEMOLOG_PROMPT_RECALL_TOKENS": "0"}}
    assert prompt_hook(off, ASKED, "s-1", "--json") == ""
    assert prompt_hook(world, "", "s-1", "--json") == ""
    told = run_cli("history", "--session", "s-1", env=world["env"], cwd=world["project"])
    assert told.code != 0 and "no memory was served" in told.err
