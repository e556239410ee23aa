"""Notes end to end on SQLite and PostgreSQL: a note reaches memory offline, a correction changes
the item it corrects, ``notes`` lists them, and a withdrawn note leaves memory at the next run.

The commands run in process (``mnemolog.cli.app.main``); the store is the one ``store_factory`` opens.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.adapters.redaction import SecretRedactor
from mnemolog.cli.app import main
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.services.consolidate import EVERYTHING, ConsolidationPolicy, consolidate
from mnemolog.domain.services.notes import add_note, withdraw_note
from support.memory import git_project
from support.sessions import thread_id, write_rollout

API = "git:github.com/acme/api"


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def world(database_url: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The CLI pointed at this test's store, one session of the api project, and the api work tree."""
    monkeypatch.setenv("MNEMOLOG_HOME", str(tmp_path / "home"))
    if database_url is not None:
        monkeypatch.setenv("MNEMOLOG_DATABASE_URL", database_url)
    sessions = tmp_path / "sessions"
    write_rollout(sessions, thread_id(1), "Fix the retry test. Always run make test first.")

    def cli(*args: str) -> Ran:
        monkeypatch.setattr(sys, "argv", ["mnemolog", *args])
        try:
            main()
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return {
        "cli": cli,
        "sessions": str(sessions),
        "api": str(git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")),
        "folder": tmp_path / "home" / "memories",
    }


def folder_text(world: dict[str, Any]) -> str:
    return "\n".join(p.read_text() for p in sorted(world["folder"].rglob("*.md")))


def test_a_note_then_run_all_offline_exits_0_and_reaches_the_folder(world: dict[str, Any]) -> None:
    cli = world["cli"]
    noted = cli("note", "--scope", "global", "Answer in British English.", "--json")
    assert noted.code == 0, noted.err

    ran = cli("run", "--all", world["sessions"], "--json")

    assert ran.code == 0, ran.out + ran.err
    report = ran.json()["consolidate"]
    assert report["status"] == "completed" and report["notes_applied"] == [noted.json()["note"]]
    assert "Answer in British English." in folder_text(world)
    assert "Answer in British English." in cli("context", "--cwd", world["api"]).out
    assert cli("run", "--all", world["sessions"]).code == 0  # and every later run too


def test_a_correction_changes_the_item_it_corrects_and_notes_lists_both(world: dict[str, Any]) -> None:
    cli = world["cli"]
    cli("note", "--scope", "global", "Answer in British English.")
    assert cli("run", "--all", world["sessions"]).code == 0
    [old] = cli("search", "always run make test first", "--cwd", world["api"], "--json", "--kind", "preference").json()["hits"]
    corrected = cli("note", "--correct", "--cwd", world["api"], "Always run make check first, never make test.")
    assert corrected.code == 0, corrected.err

    ran = cli("run", "--all", world["sessions"], "--json")

    assert ran.code == 0, ran.err
    assert ran.json()["consolidate"]["items"]["revised"] == 1
    shown = cli("show", old["id"], "--cwd", world["api"], "--json").json()
    assert shown["text"] == "Always run make check first, never make test." and shown["revision"] == 2
    assert "Always run make check first" in folder_text(world)
    context = cli("context", "--cwd", world["api"]).out
    assert "[preference] Always run make check first, never make test." in context
    assert "[preference] Always run make test first." not in context

    listed = cli("notes", "--cwd", world["api"], "--json").json()["notes"]
    assert [(n["intent"], n["scope"], n["state"], n["source"]) for n in listed] == [
        ("remember", GLOBAL_SCOPE, "applied", "cli"),
        ("correct", API, "applied", "cli"),
    ]
    plain = cli("notes", "--all")
    assert plain.code == 0
    lines = plain.out.splitlines()
    assert len(lines) == 2 and "remember" in lines[0] and "applied" in lines[0] and "Answer in British English." in lines[0]
    assert lines[1].startswith(listed[1]["id"][:8]) and "correct" in lines[1] and API in lines[1]


def test_a_withdrawn_notes_item_leaves_memory_at_the_next_run(world: dict[str, Any]) -> None:
    cli = world["cli"]
    note_id = cli("note", "--scope", "global", "Answer in British English.", "--json").json()["note"]
    assert cli("run", "--all", world["sessions"]).code == 0
    assert "British English" in cli("context", "--cwd", world["api"]).out

    withdrawn = cli("note", "--withdraw", note_id[:8], "--reason", "changed my mind", "--json")

    assert withdrawn.code == 0, withdrawn.err
    assert withdrawn.json()["note"] == note_id and len(withdrawn.json()["items_leaving"]) == 1
    assert [n["state"] for n in cli("notes", "--all", "--json").json()["notes"]] == ["withdrawn"]
    ran = cli("run", "--all", world["sessions"], "--json")
    assert ran.code == 0 and ran.json()["consolidate"]["items"]["retired"] == 1
    assert "British English" not in cli("context", "--cwd", world["api"]).out
    assert "British English" not in folder_text(world)
    assert "[preference] Always run make test first." in cli("context", "--cwd", world["api"]).out  # the session's items stay

    unknown = cli("note", "--withdraw", "0000dead")
    assert unknown.code == 5 and "no note 0000dead" in unknown.err and "Traceback" not in unknown.err


def test_a_corrected_item_outlives_its_session_while_the_correction_stands(world: dict[str, Any]) -> None:
    cli = world["cli"]
    assert cli("run", "--all", world["sessions"]).code == 0
    cli("note", "--correct", "--cwd", world["api"], "Always run make check first, never make test.")
    assert cli("run", "--all", world["sessions"]).code == 0

    forgot = cli("forget", "--session", thread_id(1), "--json")

    assert forgot.code == 0, forgot.err
    context = cli("context", "--cwd", world["api"]).out
    assert "[preference] Always run make check first, never make test." in context  # the note is its evidence
    assert "[task]" not in context  # the session's own items went with it


def test_a_note_through_the_offline_consolidator_and_the_plan_check(store_factory) -> None:
    store = store_factory()
    noted = add_note(store, "Use pnpm, not npm.", "remember", API, SecretRedactor()).note_id
    policy = ConsolidationPolicy(retention=EVERYTHING)

    first = consolidate(store, HeuristicConsolidator(), SecretRedactor(), policy)

    assert first.status == "completed" and first.overrides == [], first.detail
    [item] = store.reads().active_items()
    assert (item.text, item.scope, item.evidence) == ("Use pnpm, not npm.", API, (noted,))
    second = consolidate(store, HeuristicConsolidator(), SecretRedactor(), policy)
    assert second.status == "completed" and [i.item_id for i in store.reads().active_items()] == [item.item_id]

    withdraw_note(store, str(noted))
    third = consolidate(store, HeuristicConsolidator(), SecretRedactor(), policy)
    assert third.status == "completed" and third.retired == 1 and store.reads().active_items() == []
