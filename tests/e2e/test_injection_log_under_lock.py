"""A serving made while another process holds the log's write lock is still recorded, once."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli, spawn_cli
from support.memory import git_project, item, save

SESSION = "5f0c3a52-0000-4000-8000-00000000beef"
A_SCOPE = "git:github.com/acme/api"


def _served(env: dict[str, str]) -> list[dict[str, object]]:
    done = run_cli("history", "--session", SESSION, "--json", env=env)
    assert done.code == 0, done.err
    servings: list[dict[str, object]] = done.json()["servings"]
    return servings


def test_a_hook_served_while_the_log_is_locked_is_recorded_by_the_next_command_exactly_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        save(store, item(A_SCOPE, "Run make test-fast before pushing.", title="Fast tests"))
    finally:
        store.close()
    api = git_project(tmp_path / "api", "git@github.com:acme/api.git")
    env = {"MNEMOLOG_HOME": str(home)}
    writer = sqlite3.connect(home / "events.sqlite", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # another process writing: the log's write lock, held past SQLite's time-out
        hook = spawn_cli("context", "--hook", "--json", "--agent", "claude-code", env=env, stdin=json.dumps({"cwd": str(api), "session_id": SESSION}))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert hook.code == 0, hook.err
    assert "make test-fast" in hook.json()["hookSpecificOutput"]["additionalContext"]  # the session got its memory
    kept = list((home / "served-spool").glob("*.json"))
    assert len(kept) == 1
    backup = tmp_path / "kept.json"
    shutil.copy(kept[0], backup)

    first = _served(env)  # the next store session records it
    assert [(s["surface"], s["project"]) for s in first] == [("hook", A_SCOPE)]
    shutil.copy(backup, kept[0])  # as if a process recorded it and died before it forgot the file
    assert _served(env) == first  # refused as the same serving, and forgotten
    assert not list((home / "served-spool").glob("*.json"))
