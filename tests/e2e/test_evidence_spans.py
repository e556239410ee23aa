"""Line-level provenance on real sessions: every span's line, read back from the session file, holds its quote."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.shared_fixtures import shared_fixture

READER = "path:/nowhere"  # a project that reads only the user's global items


def strings(value: Any) -> Iterator[str]:
    """Every string a JSON value holds (a string that is JSON itself, as Codex stores shell output, looked into)."""
    if isinstance(value, str):
        yield value
        if value[:1] in "{[":
            try:
                inner = json.loads(value)
            except ValueError:
                return
            yield from strings(inner)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def line_of(path: str, number: int) -> str:
    with open(path, encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            if n == number:
                return line
    raise AssertionError(f"{path} has no line {number}")


def test_explain_lists_spans_whose_lines_hold_their_quotes(tmp_path: Path) -> None:
    folders = [shared_fixture("codex-rollouts"), shared_fixture("claude-code")]
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    ran = run_cli("run", "--all", "--json", *map(str, folders), env=env)
    assert ran.code == 0, ran.err
    store = open_store(Settings(home=tmp_path / "home"))
    try:
        store.catch_up()
        items = [(str(i.item_id), i.scope) for i in store.reads().active_items()]
    finally:
        store.close()
    assert len(items) >= 5

    checked = 0
    agents = set()
    for item_id, scope in items:
        reader = scope if scope != "global" else READER
        told = run_cli("explain", item_id, "--project", reader, "--json", env=env)
        assert told.code == 0, told.err
        story = told.json()
        assert story["spans"], f"item {item_id} has no evidence span"
        for span in story["spans"]:
            assert span["quote"].strip() and span["native_id"] and span["path"]
            if span["line"] is None:
                continue
            record = json.loads(line_of(span["path"], span["line"]))
            assert any(span["quote"] in s for s in strings(record)), (item_id, span)
            checked += 1
            agents.add(span["agent"])
        shown = run_cli("show", item_id, "--project", reader, "--json", env=env)
        assert shown.code == 0, shown.err
        assert [s["line"] for s in shown.json()["spans"]] == [s["line"] for s in story["spans"]]
    assert checked >= 10 and agents == {"codex", "claude-code"}

    # The user sees the agent's own session id; the internal one only in --json.
    item_id, scope = next((i, s) for i, s in items if s != "global")
    plain = run_cli("explain", item_id, "--project", scope, env=env)
    story = run_cli("explain", item_id, "--project", scope, "--json", env=env).json()
    assert plain.code == 0 and "evidence:" in plain.out
    assert all(s["native_id"] in plain.out for s in story["spans"])
    assert all(s["session_id"] not in plain.out for s in story["spans"])
