"""`mnemolog mcp` answers initialize and tools/list before the SDK loads, as the SDK answers them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mnemolog.cli.mcp_handshake import ANSWERS, REPLAY_ID, Handshake, package_version
from support.cli import MNEMOLOG, spawn_cli
from support.mcp_wire import INITIALIZED, exchange, initialize, sdk_answers, tools_list


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "MNEMOLOG_HOME": str(tmp_path / "home")}


def test_the_answers_kept_for_the_handshake_are_the_sdks_own() -> None:
    assert json.loads(ANSWERS.read_text()) == sdk_answers(), "tools or the SDK changed: run `python tests/support/mcp_wire.py`"


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05", "1999-01-01"])
def test_mnemolog_mcp_answers_the_handshake_as_the_sdk_does(tmp_path: Path, version: str) -> None:
    sdk_only = [sys.executable, "-c", "import sys; from mnemolog.cli.mcp_server import run_stdio; run_stdio(sys.argv[1])", str(tmp_path)]
    talk = [initialize(version, 7), INITIALIZED, tools_list("t"), tools_list(8)]
    ours = exchange([MNEMOLOG, "mcp", "--cwd", str(tmp_path)], talk, _env(tmp_path))
    assert ours == exchange(sdk_only, talk, _env(tmp_path))
    assert ours[0]["result"]["serverInfo"]["version"] == package_version()
    assert [a["id"] for a in ours] == [7, "t", 8]


def test_after_the_handshake_the_sdk_serves_the_session(tmp_path: Path) -> None:
    talk: list[dict[str, Any]] = [
        initialize("2025-06-18"),
        INITIALIZED,
        tools_list(),
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_memory", "arguments": {"query": "tests"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    ]
    answers = exchange([MNEMOLOG, "mcp", "--cwd", str(tmp_path)], talk, _env(tmp_path))
    assert [a["id"] for a in answers] == [1, 2, 3, 4]  # the replayed initialize's own answer never reaches the client
    call = answers[2]["result"]
    assert not call.get("isError"), call
    assert json.loads(call["content"][0]["text"])["hits"] == []
    assert answers[3]["result"] == {}


def test_a_request_before_initialize_goes_to_the_sdk_as_it_came(tmp_path: Path) -> None:
    talk = [tools_list(1), initialize("2025-06-18", 2)]
    ours = exchange([MNEMOLOG, "mcp"], talk, _env(tmp_path))
    sdk_only = [sys.executable, "-c", "import sys; from mnemolog.cli.mcp_server import run_stdio; run_stdio(sys.argv[1])", str(tmp_path)]
    assert ours == exchange(sdk_only, talk, _env(tmp_path))


def test_what_the_handshake_leaves_to_the_sdk() -> None:
    answers = json.loads(ANSWERS.read_text())
    handshake = Handshake(answers, version=lambda: "9")

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    assert handshake.answer(line(tools_list())) is None  # before initialize
    assert handshake.answer(line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})) is None
    assert handshake.answer(b"not json\n") is None
    answered = handshake.answer(line(initialize("2025-06-18")))
    assert answered is not None and json.loads(answered)["result"]["serverInfo"] == {"name": "mnemolog", "version": "9"}
    assert handshake.answer(line(tools_list())) is None  # before notifications/initialized
    assert handshake.answer(line(INITIALIZED)) == b""
    assert handshake.answer(line({**tools_list(), "params": {"cursor": "x"}})) is None
    assert handshake.answer(line(initialize("2025-06-18", 5))) is None  # a second initialize: the SDK's to refuse
    assert handshake.answer(line(tools_list())) is not None
    assert [json.loads(m).get("id") for m in handshake.replay] == [REPLAY_ID, None]


def test_mcp_refuses_a_folder_that_is_not_there_with_or_without_typer(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    fast = spawn_cli("mcp", "--cwd", missing, env={"MNEMOLOG_HOME": str(tmp_path / "home")})
    typer = spawn_cli("mcp", "--cwd", missing, "--cwd", missing, env={"MNEMOLOG_HOME": str(tmp_path / "home")})
    assert fast.code == typer.code == 2
    assert "not a folder" in fast.err and fast.err == typer.err
