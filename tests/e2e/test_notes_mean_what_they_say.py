"""Notes that mean what they say (issue 25, point 5), as a user runs them, on SQLite and PostgreSQL.

A global note, or a note saying it holds "for all my projects", becomes a
user-wide item that every project's context serves; it is never merged into
a project item. Withdrawing one note never removes what another note still
asks for. The commands run in process (``run_cli``) in two git projects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.memory import git_project

P = "git:github.com/acme/p"
Q = "git:github.com/acme/q"
PNPM = "I always prefer pnpm over npm"


class User:
    """One user's two projects and their mnemolog home."""

    def __init__(self, tmp_path: Path, database_url: str | None) -> None:
        self.env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
        if database_url is not None:
            self.env["MNEMOLOG_DATABASE_URL"] = database_url
        self.p = git_project(tmp_path / "work" / "p", "git@github.com:acme/p.git")
        self.q = git_project(tmp_path / "work" / "q", "git@github.com:acme/q.git")

    def ok(self, *args: str, cwd: Path | None = None) -> str:
        done = run_cli(*args, env=self.env, cwd=cwd)
        assert done.code == 0, done.out + done.err
        return done.out

    def note(self, text: str, *args: str, cwd: Path) -> str:
        """The note's id."""
        noted: str = json.loads(self.ok("note", text, *args, "--json", cwd=cwd))["note"]
        return noted

    def consolidate(self) -> dict[str, Any]:
        report: dict[str, Any] = json.loads(self.ok("consolidate", "--json"))
        assert report["status"] == "completed", report
        return report

    def served(self, project: Path, text: str) -> list[str]:
        """The lines ``context --cwd project`` serves that state ``text``."""
        return [line for line in self.ok("context", "--cwd", str(project)).splitlines() if line.startswith("- [") and text in line]

    def notes(self) -> dict[str, tuple[str, str]]:
        """Each note's (scope, state), by id."""
        return {n["id"]: (n["scope"], n["state"]) for n in json.loads(self.ok("notes", "--all", "--json"))["notes"]}


@pytest.fixture
def user(tmp_path: Path, database_url: str | None) -> User:
    return User(tmp_path, database_url)


def user_wide(line: str, text: str) -> bool:
    return line.startswith(f"- [preference] {text} (global") and "[item:" in line


def test_a_global_note_repeating_a_project_note_is_served_in_every_project_and_outlives_it(user: User) -> None:
    first = user.note(PNPM, cwd=user.p)
    user.consolidate()
    second = user.note(PNPM, "--scope", "global", cwd=user.p)
    report = user.consolidate()

    assert report["notes_applied"] == [second]
    for project in (user.p, user.q):
        served = user.served(project, PNPM)
        assert served and all(user_wide(line, PNPM) for line in served), served  # a user-wide item, nothing else
    assert user.notes() == {first: ("global", "applied"), second: ("global", "applied")}  # "I always": the user's own

    withdrawn = json.loads(user.ok("note", "--withdraw", first, "--json"))
    assert withdrawn["items_leaving"] == []  # the global note still asks for it
    user.consolidate()

    for project in (user.p, user.q):
        assert [line for line in user.served(project, PNPM) if user_wide(line, PNPM)], project
    assert user.notes() == {first: ("global", "withdrawn"), second: ("global", "applied")}
    [item] = json.loads(user.ok("list", "items", "--all", "--json"))["items"]
    story = json.loads(user.ok("explain", item["id"], "--json", cwd=user.q))
    assert {n["note"] for n in story["notes"]} == {first, second} and story["sessions"] == [] and story["sessions_elsewhere"] == 0  # notes, not sessions


def test_a_global_note_is_never_merged_into_the_project_item_it_repeats(user: User) -> None:
    text = "Prefer pnpm over npm"
    project_note = user.note(text, cwd=user.p)
    user.consolidate()
    global_note = user.note(text, "--scope", "global", cwd=user.p)
    user.consolidate()

    assert user.notes() == {project_note: (P, "applied"), global_note: ("global", "applied")}
    assert any(user_wide(line, text) for line in user.served(user.q, text))  # user-wide: Q has it too
    assert any("(p)" in line for line in user.served(user.p, text))  # P keeps its own

    user.ok("note", "--withdraw", project_note)
    user.consolidate()
    for project in (user.p, user.q):
        assert any(user_wide(line, text) for line in user.served(project, text)), project

    user.ok("note", "--withdraw", global_note)
    user.consolidate()
    assert user.served(user.q, text) == [] and user.served(user.p, text) == []


def test_withdrawing_the_global_note_keeps_the_project_item_the_project_note_asks_for(user: User) -> None:
    text = "Prefer pnpm over npm"
    user.note(text, cwd=user.p)
    user.consolidate()
    global_note = user.note(text, "--scope", "global", cwd=user.p)
    user.consolidate()

    user.ok("note", "--withdraw", global_note)
    user.consolidate()

    assert user.served(user.q, text) == []
    served = user.served(user.p, text)
    assert len(served) == 1 and "(p)" in served[0]


def test_two_notes_asking_the_same_in_one_project_keep_the_item_while_one_stands(user: User) -> None:
    text = "Prefer pnpm over npm"
    first = user.note(text, cwd=user.p)
    user.consolidate()
    second = user.note(f"{text}.", cwd=user.p)
    user.consolidate()
    assert user.notes() == {first: (P, "applied"), second: (P, "applied")}

    user.ok("note", "--withdraw", first)
    user.consolidate()

    assert len(user.served(user.p, text)) == 1


def test_a_note_for_all_my_projects_from_inside_a_project_is_user_wide(user: User) -> None:
    text = "For all my projects: write commit messages in the imperative mood."
    said = user.ok("note", text, cwd=user.p)
    assert "(remember, global)" in said
    user.consolidate()

    for project in (user.p, user.q):
        served = user.served(project, "write commit messages in the imperative mood")
        assert len(served) == 1 and "(global" in served[0], served
    [(scope, state)] = user.notes().values()
    assert (scope, state) == ("global", "applied")


def test_a_scope_the_user_chose_is_kept_even_when_the_note_says_all_my_projects(user: User) -> None:
    text = "For all my projects: write commit messages in the imperative mood."
    user.ok("note", text, "--scope", "project", cwd=user.p)
    user.consolidate()

    assert user.served(user.q, "imperative mood") == []
    assert len(user.served(user.p, "imperative mood")) == 1
    assert [scope for scope, _ in user.notes().values()] == [P]
