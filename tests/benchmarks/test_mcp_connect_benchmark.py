"""Benchmark: how soon ``mnemolog mcp`` answers a client, against ``python -c pass`` (goal, issue 29: ≤ 1 s on 100k items).

``pytest -m benchmark -s tests/benchmarks`` runs it on a store of 100,000 items
(15 interleaved rounds); the normal suite on 300 items (2 rounds; nothing is
timed against a threshold). Each round spawns the server and times, from the
spawn, its answer to ``initialize``, to ``tools/list`` (after
``notifications/initialized``, as Claude Code sends them) and to a first
``tools/call`` (search_memory: the store opened and caught up), each also as a
ratio to a bare interpreter's run in the same round. The processes run with
their bytecode written (``support.cli.compiled_env``), as an installed mnemolog runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.bench import SCALES, ms, ratios, report, spread, timed
from support.bench_items import COMMON, fill
from support.cli import MNEMOLOG, compiled_env
from support.mcp_wire import INITIALIZED, initialize, tools_list

ITEMS = {"ci": 300, "full": 100_000}
ROUNDS = {"ci": 2, "full": 15}
SEARCH = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search_memory", "arguments": {"query": COMMON}}}


def _connect(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """Seconds from the spawn to the answers to initialize, tools/list and a first tools/call."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None

    def ask(*messages: dict[str, object]) -> float:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert "result" in answer, answer
        return time.perf_counter() - start

    try:
        initialized = ask(initialize("2025-06-18"))
        listed = ask(INITIALIZED, tools_list())
        called = ask(SEARCH)
    finally:
        process.stdin.close()
        process.wait(60)
    return initialized, listed, called


@pytest.mark.parametrize("scale", SCALES)
def test_mcp_server_answers_the_handshake_at_once_on_a_large_store(tmp_path: Path, scale: str) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        fill(store, ITEMS[scale])
    finally:
        store.close()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MNEMOLOG_")}, "MNEMOLOG_HOME": str(home), "NO_COLOR": "1"}
    env = compiled_env(env, tmp_path / "bytecode")  # the warm-up below writes it, as a first run after install would
    server = [MNEMOLOG, "mcp"]
    bare = [sys.executable, "-c", "pass"]
    cwd = tmp_path
    _connect(server, env, cwd)  # warm the page cache and write the bytecode
    subprocess.run(bare, env=env, check=True)
    rows: dict[str, list[float]] = {"python -c pass": [], "initialize answered": [], "tools/list answered": [], "first tools/call answered": []}
    for _ in range(ROUNDS[scale]):
        rows["python -c pass"].append(timed(lambda: subprocess.run(bare, env=env, check=True)))
        initialized, listed, called = _connect(server, env, cwd)
        rows["initialize answered"].append(initialized)
        rows["tools/list answered"].append(listed)
        rows["first tools/call answered"].append(called)
    base = rows["python -c pass"]
    lines = [f"{name:<27} {ms(values)}  ratio {spread(ratios(values, base))}" for name, values in rows.items()]
    report(f"mcp connect, {ROUNDS[scale]} interleaved rounds, {ITEMS[scale]:,} items, SQLite, from spawn (goal: tools/list ≤ 1 s)", lines)
