"""The SessionStart hook's start without typer (cli/context_command.py) prints and records what the typer command does.

``mnemolog context --hook …`` with plain options is parsed by
``hook_arguments`` and runs without typer; anything else (help, a bad value, an
option given twice, an unknown one) goes to typer as every other command does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.cli.context_command import hook_arguments
from support.cli import MNEMOLOG, run_cli
from support.memory import git_project, item, save

A_SCOPE = "git:github.com/acme/api"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """A store with an item of project A and a user-wide one, and A's work tree."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        save(
            store,
            item(A_SCOPE, "Run make test-fast before pushing; the full suite is slow.", title="Fast tests"),
            item("global", "The user prefers short answers.", kind="preference"),
        )
    finally:
        store.close()
    project = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    return {"home": home, "env": {"MNEMOLOG_HOME": str(home)}, "project": project}


def _through_typer(args: list[str], env: dict[str, str], stdin: str) -> tuple[str, str]:
    """What the typer command prints for ``args`` (the path every command but the hook takes)."""
    code = (
        "import sys; from mnemolog.cli.command_group import app; "
        "app(args=sys.argv[1:], prog_name='mnemolog', standalone_mode=False)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env={**os.environ, **env, "NO_COLOR": "1"}, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout, done.stderr


@pytest.mark.parametrize(
    "options",
    [
        ["--json", "--agent", "codex"],
        ["--json", "--agent=claude-code"],
        ["--agent", "codex", "--budget", "2000"],
        ["--json"],
    ],
    ids=["codex-json", "claude-code-json", "codex-budget-text", "json-no-agent"],
)
def test_the_hook_prints_what_the_typer_command_prints(world: dict, options: list[str]) -> None:
    args = ["context", "--hook", *options]
    stdin = json.dumps({"cwd": str(world["project"]), "session_id": "s-1", "hook_event_name": "SessionStart"})
    assert hook_arguments(args) is not None  # this is the path without typer
    fast = run_cli(*args, env=world["env"], stdin=stdin)
    typer_out, typer_err = _through_typer(args, world["env"], stdin)
    assert fast.code == 0, fast.err
    assert "make test-fast" in fast.out
    assert (fast.out, fast.err) == (typer_out, typer_err)


@pytest.mark.parametrize(
    "args",
    [
        ["context", "--hook", "--help"],
        ["context", "--hook", "--budget", "many"],
        ["context", "--hook", "--agent", "codex", "--agent", "codex"],
        ["context", "--hook", "--json=yes"],
        ["context", "--hook", "--agent"],
        ["context", "--hook", "--bogus"],
        ["context", "--json"],
        ["search", "--hook"],
    ],
)
def test_anything_but_plain_hook_options_goes_to_typer(args: list[str]) -> None:
    assert hook_arguments(args) is None


def test_plain_hook_options_are_read_as_typer_reads_them() -> None:
    given = hook_arguments(["context", "--hook", "--cwd", "/tmp", "--budget", "0120", "--session=abc", "--json"])
    assert given == {
        "cwd": Path("/tmp"),
        "project_key": None,
        "hook": True,
        "agent": None,
        "budget": 120,
        "session": "abc",
        "json_out": True,
    }


def test_a_bad_value_is_typers_usage_error(world: dict) -> None:
    done = run_cli("context", "--hook", "--budget", "many", env=world["env"], stdin="{}")
    assert done.code == 2
    assert "Invalid value for '--budget'" in done.err


def test_the_hook_imports_no_typer_and_projects_only_the_injection_it_finds(world: dict) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMOLOG_")}
    env.update(world["env"], NO_COLOR="1")
    stdin = json.dumps({"cwd": str(world["project"])})
    hook = [sys.executable, "-X", "importtime", MNEMOLOG, "context", "--hook", "--json", "--agent", "codex"]
    subprocess.run(hook, env=env, input=stdin, capture_output=True, text=True, check=True)  # records an Injection
    done = subprocess.run(hook, env=env, input=stdin, capture_output=True, text=True, check=True)  # projects it
    modules = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:") and line.count("|") == 2}
    assert "make test-fast" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert {"mnemolog.projections.memory_view", "mnemolog.domain.injection"} <= modules  # the previous Injection was projected
    unused = ("typer", "rich", "pydantic_settings", "mnemolog.domain.session", "mnemolog.domain.memory_item", "mnemolog.domain.consolidation")
    assert sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in unused)) == []
