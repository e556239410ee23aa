"""A later session replaces a command: the next session is served only the new one, and explain says why.

A session teaches `make serve`; a later one sees it fail (the Makefile lost the
target) and `just dev` work. After the later session is consolidated, the
project's context serves `just dev` and nothing that says `make serve` works;
`explain` on the old item shows when its valid time ended and why.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from support.agent_sessions import ClaudeSession, CodexRollout
from support.cli import run_cli

REMOTE = "git@github.com:example/web.git"
SCOPE = "git:github.com/example/web"


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "web"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", REMOTE], check=True)
    return folder


def _teaches(project: Path, sessions: Path) -> Path:
    return (
        CodexRollout(1, datetime(2026, 10, 5, 9, tzinfo=UTC), str(project), REMOTE)
        .user("Start the dev server.")
        .shell("make serve", "ready on http://localhost:3000")
        .say("Running.")
        .write(sessions)
    )


def _replaces(project: Path, sessions: Path) -> Path:
    return (
        ClaudeSession(2, datetime(2026, 10, 9, 14, tzinfo=UTC), str(project))
        .user("The dev server does not start any more, fix it.")
        .bash("make serve", "make: *** No rule to make target 'serve'.  Stop.", 2)
        .bash("just dev", "ready on http://localhost:3000")
        .say("`make serve` is gone; `just dev` starts it.")
        .write(sessions)
    )


def _context(project: Path, env: dict[str, str]) -> str:
    result = run_cli("context", "--cwd", str(project), env=env)
    assert result.code == 0, result.err
    return result.out


def test_context_serves_only_the_new_command_and_explain_says_when_and_why(tmp_path: Path) -> None:
    project, sessions = _project(tmp_path), tmp_path / "sessions"
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    _teaches(project, sessions)
    assert run_cli("run", "--all", str(sessions), env=env).code == 0
    assert "`make serve` passed" in _context(project, env)

    _replaces(project, sessions)
    result = run_cli("run", "--all", "--json", str(sessions), env=env)
    assert result.code == 0, result.err
    assert result.json()["consolidate"]["items"]["invalidated"] == 2  # the fact and the task record that ran it

    served = _context(project, env)
    assert "`just dev` passed" in served
    assert "`make serve` passed" not in served
    assert "Commands that passed: `make serve`" not in served
    hits = run_cli("search", "make serve", "--project", SCOPE, "--json", env=env).json()["hits"]
    assert hits  # the failure that says what to do instead is found
    assert all("`make serve` passed" not in hit["text"] for hit in hits)

    story = run_cli("explain", "`make serve` passed", "--cwd", str(project), "--json", env=env)
    assert story.code == 0, story.err
    data = story.json()
    assert data["now"]["status"] == "invalidated"
    assert data["now"]["text"] == "`make serve` passed"
    assert data["now"]["valid_to"].startswith("2026-10-09T14:")  # when the later session saw it fail
    ended = [e for e in data["history"] if e.get("action") == "invalidated"]
    assert len(ended) == 1
    assert ended[0]["valid_to"] == data["now"]["valid_to"]
    assert ended[0]["reason"].startswith("superseded on 2026-10-09 by session ")
    assert "`make serve` failed, and another command worked; `just dev` is used instead" in ended[0]["reason"]

    text = run_cli("explain", "`make serve` passed", "--cwd", str(project), env=env).out
    assert "invalidated" in text and "superseded on 2026-10-09" in text


def test_a_first_import_of_both_sessions_serves_only_the_new_command(tmp_path: Path) -> None:
    project, sessions = _project(tmp_path), tmp_path / "sessions"
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    _teaches(project, sessions)
    _replaces(project, sessions)
    assert run_cli("run", "--all", str(sessions), env=env).code == 0
    served = _context(project, env)
    assert "`just dev` passed" in served
    assert "`make serve` passed" not in served
    assert "Commands that passed: `make serve`" not in served
