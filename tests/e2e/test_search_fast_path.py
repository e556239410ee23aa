"""`mnemolog search` without typer (cli/search_command.py) prints what the typer command does; anything unusual goes to typer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.cli.search_command import search_arguments
from support.cli import run_cli
from support.memory import git_project, item, save

A_SCOPE = "git:github.com/acme/api"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        save(store, item(A_SCOPE, "Run make test-fast before pushing; the full suite is slow.", title="Fast tests"))
    finally:
        store.close()
    return {"env": {"MNEMOLOG_HOME": str(home)}, "project": git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")}


def _through_typer(args: list[str], env: dict[str, str], cwd: Path) -> str:
    code = "import sys; from mnemolog.cli.command_group import app; app(args=sys.argv[1:], prog_name='mnemolog', standalone_mode=False)"
    done = subprocess.run([sys.executable, "-c", code, *args], env={**os.environ, **env, "NO_COLOR": "1"}, cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.mark.parametrize("options", [[], ["--json"], ["--only", "items", "--limit", "3"], ["--kind=knowledge", "--json"], [f"--project={A_SCOPE}"]])
def test_a_plain_search_runs_without_typer_and_prints_what_typer_prints(world: dict, options: list[str]) -> None:
    args = ["search", "test-fast pushing", *options]
    assert search_arguments(args) is not None  # the path without typer

    fast = run_cli(*args, env=world["env"], cwd=world["project"])

    assert fast.code == 0, fast.err
    assert fast.out == _through_typer(args, world["env"], world["project"])
    assert "Fast tests" in fast.out


@pytest.mark.parametrize(
    "args",
    [
        ["search"], ["search", "--help"], ["search", "a", "b"], ["search", "a", "--limit", "0"], ["search", "a", "--limit", "x"],
        ["search", "a", "--json", "--json"], ["search", "a", "--kind"], ["search", "a", "--nope"], ["search", "a", "--json=1"],
    ],
)
def test_anything_unusual_goes_to_typer(args: list[str]) -> None:
    assert search_arguments(args) is None
