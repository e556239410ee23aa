"""Benchmark: how long the CLI takes to start, against ``python -c pass``.

Not part of the default run: ``pytest -m benchmark -s tests/benchmarks``.
Nothing here asserts a time (machines differ, CI is noisy); it prints the
median wall time of interleaved runs and each command's ratio to the bare
interpreter. The goal (issue 10) is ``mnemolog --help`` within 5x.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli import MNEMOLOG

pytestmark = pytest.mark.benchmark

ROUNDS = 21

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "mnemolog --help": [MNEMOLOG, "--help"],
    "mnemolog context --help": [MNEMOLOG, "context", "--help"],
    "mnemolog doctor --json": [MNEMOLOG, "doctor", "--json"],
}


def _wall(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def test_cli_startup_against_bare_python(tmp_path: Path) -> None:
    env = {**os.environ, "MNEMOLOG_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env.pop("MNEMOLOG_DATABASE_URL", None)
    for command in COMMANDS.values():  # warm the page cache and create the empty store
        _wall(command, env)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(ROUNDS):  # interleaved, so a busy moment hits every command alike
        for name, command in COMMANDS.items():
            times[name].append(_wall(command, env))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["python -c pass"]
    lines = [f"\nstart-up, median of {ROUNDS} interleaved runs (empty SQLite home):"]
    for name, median in medians.items():
        lines.append(f"  {name:<26} {median * 1000:7.1f} ms  {median / base:5.1f}x")
    print("\n".join(lines))
