"""`forget` and `note --forget` as a user runs them (in process): the dry run and the question list what the forget then changes.

The store holds the value in an item's text, in another item's evidence quote
only, in a session, a note and a user profile.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import Result, run_cli
from support.forgetting import SECRET, Quoted, quoted


@pytest.fixture
def home(tmp_path: Path) -> tuple[dict[str, str], Quoted]:
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import open_store
    from support.stores import FixedClock

    store = open_store(Settings(home=tmp_path / "home"), clock=FixedClock())
    try:
        world = quoted(store)
    finally:
        store.close()
    return {"MNEMOLOG_HOME": str(tmp_path / "home")}, world


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard input is a terminal: forget asks (typer reads the answer from the test's stdin)."""
    monkeypatch.setattr("mnemolog.cli.forget_commands._on_terminal", lambda: True)


def answered_json(result: Result) -> Any:
    """The JSON a command printed after a question (the test's terminal echoes the answer to stdout)."""
    return json.loads(result.out[result.out.index("{") :])


def events(env: dict[str, str]) -> int:
    count: int = run_cli("doctor", "--json", env=env).json()["events"]
    return count


def listed(result: Result, world: Quoted) -> dict[str, set[str]]:
    """What a dry run or a question listed, by what it names."""
    text = result.out + result.err
    names = {
        "items": {str(world.carrier), str(world.quoting), str(world.clean)},
        "sessions": {str(world.carrier_session), str(world.clean_session)},
        "notes": {str(world.note)},
    }
    found = {
        "items": {i for i in names["items"] if f"retire {i[:8]}" in text},
        "sessions": {s for s in names["sessions"] if f"scrub session {s}" in text},
        "notes": {n for n in names["notes"] if f"scrub note {n}" in text},
    }
    assert SECRET not in text and "falcon" not in text.lower()
    return found


def test_the_dry_run_and_the_question_list_exactly_what_forget_changes(home: tuple[dict[str, str], Quoted], terminal: None) -> None:
    env, world = home
    expected = {
        "items": {str(world.carrier), str(world.quoting)},  # the quoting item too: its evidence quotes the value
        "sessions": {str(world.carrier_session)},
        "notes": {str(world.note)},
    }
    before = events(env)

    dry = run_cli("forget", SECRET, "--dry-run", "--json", env=env)
    assert dry.code == 0, dry.err
    plan = dry.json()
    assert {"dry_run", "action", "scope", "tombstone", "already", "retired", "retired_items", "scrubbed_sessions", "scrubbed_notes"} <= plan.keys()
    assert set(plan["retired"]) == expected["items"] and set(plan["scrubbed_sessions"]) == expected["sessions"]
    assert set(plan["scrubbed_note_ids"]) == expected["notes"] and plan["scrubbed_notes"] == 1
    assert plan["scrubbed_profiles"] == [str(world.run)]
    assert {i["id"]: i["why"] for i in plan["retired_items"]}[str(world.quoting)] == "its evidence quotes the value"
    text = run_cli("forget", SECRET, "--dry-run", env=env)
    assert "retire 2 item(s), scrub 1 session(s), scrub 1 note(s), scrub 1 user profile(s)" in text.out
    assert listed(text, world) == expected

    refused = run_cli("forget", SECRET, env=env, stdin="n\n")
    assert refused.code == 1 and "cancelled" in refused.err
    assert "Forget for good? This will retire 2 item(s)" in refused.err
    assert listed(refused, world) == expected
    assert events(env) == before  # neither the dry runs nor a no wrote anything

    done = run_cli("forget", SECRET, "--json", env=env, stdin="y\n")
    assert done.code == 0, done.err
    assert listed(done, world) == expected  # the question the yes answered
    report = answered_json(done)
    changed = {"items": set(report["retired"]), "sessions": set(report["scrubbed_sessions"]), "notes": set(report["scrubbed_notes"])}
    assert changed == expected and report["scrubbed_profiles"] == plan["scrubbed_profiles"]
    assert report["tombstone"] == plan["tombstone"]


def test_note_forget_refuses_short_values_and_asks_on_a_terminal_like_forget(home: tuple[dict[str, str], Quoted], terminal: None) -> None:
    env, world = home
    before = events(env)

    short = run_cli("note", "--forget", "ab", env=env)
    assert short.code == 2 and "shorter than 3 characters" in short.err and "--force" in short.err

    refused = run_cli("note", "--forget", SECRET, env=env, stdin="n\n")
    assert refused.code == 1 and "cancelled" in refused.err
    assert "Forget for good? This will retire 2 item(s), scrub 1 session(s), scrub 1 note(s)" in refused.err
    assert listed(refused, world)["items"] == {str(world.carrier), str(world.quoting)}
    assert events(env) == before

    done = run_cli("note", "--forget", SECRET, "--json", env=env, stdin="y\n")
    assert done.code == 0, done.err
    report = answered_json(done)
    assert set(report["retired"]) == {str(world.carrier), str(world.quoting)} and report["scope"] == "global"
    assert report["scrubbed_notes"] == [str(world.note)]
    forced = run_cli("note", "--forget", "ab", "--force", "--yes", "--json", env=env)
    assert forced.code == 0, forced.err
