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


def _commands_by_call(path: str) -> dict[str, str]:
    """Every shell call's id -> its command line, read from the session file itself (both agents)."""
    found: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
            if payload.get("type") == "function_call" and isinstance(payload.get("arguments"), str):
                try:
                    args = json.loads(payload["arguments"])
                except ValueError:
                    continue
                command = args.get("cmd", args.get("command")) if isinstance(args, dict) else None
                if isinstance(command, list):
                    command = " ".join(map(str, command))
                if isinstance(command, str):
                    found[str(payload.get("call_id"))] = command
            message = record.get("message") if isinstance(record.get("message"), dict) else {}
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                    command = block["input"].get("command")
                    if isinstance(command, str):
                        found[str(block.get("id"))] = command
    return found


def _call_of(record: dict[str, Any]) -> str | None:
    """The call id a tool-result line answers, or None when the line is not a tool result."""
    payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
    if payload.get("type") in ("function_call_output", "custom_tool_call_output", "exec_command_end"):
        return str(payload.get("call_id"))
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    for block in message.get("content") if isinstance(message.get("content"), list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            return str(block.get("tool_use_id"))
    return None


def test_a_command_facts_spans_quote_the_command_or_its_own_result(tmp_path: Path) -> None:
    """"`npm run build` passed" never quotes the output of `cat package.json` (or of any other command)."""
    folders = [shared_fixture("codex-rollouts"), shared_fixture("claude-code")]
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    assert run_cli("run", "--all", *map(str, folders), env=env).code == 0
    store = open_store(Settings(home=tmp_path / "home"))
    try:
        store.catch_up()
        items = [(str(i.item_id), i.scope, i.text) for i in store.reads().active_items()]
    finally:
        store.close()
    facts = 0
    for item_id, scope, text in items:
        if not (text.startswith("`") and text.endswith("` passed")):
            continue
        command = text[1:-len("` passed")]
        story = run_cli("explain", item_id, "--project", scope if scope != "global" else READER, "--json", env=env).json()
        facts += bool(story["spans"])
        for span in story["spans"]:
            if span["line"] is None:
                continue
            call = _call_of(json.loads(line_of(span["path"], span["line"])))
            if call is None:
                continue
            ran = " ".join(_commands_by_call(span["path"]).get(call, "").split())
            assert command.split(" && ")[-1].split("…")[0] in ran, (text, span["line"], span["quote"], ran)
    assert facts >= 3, "the fixtures' command facts have evidence spans"
