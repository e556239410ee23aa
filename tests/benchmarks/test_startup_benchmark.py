"""Benchmark: how long the CLI takes to start, against ``python -c pass`` (goal: ``mnemolog --help`` ≤ 5×).

``pytest -m benchmark -s tests/benchmarks`` runs 21 interleaved rounds; the
normal suite runs 2 (nothing is timed against a threshold).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.bench import SCALES, interleaved, ms, ratios, report, spread
from support.cli import MNEMOLOG, compiled_env

ROUNDS = {"ci": 2, "full": 21}

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "mnemolog --help": [MNEMOLOG, "--help"],
    "mnemolog context --help": [MNEMOLOG, "context", "--help"],
    "mnemolog doctor --json": [MNEMOLOG, "doctor", "--json"],
    "mnemolog search word": [MNEMOLOG, "search", "word", "--project", "git:example.com/a/b"],
}


@pytest.mark.parametrize("scale", SCALES)
def test_cli_startup_against_bare_python(tmp_path: Path, scale: str) -> None:
    env = {**os.environ, "MNEMOLOG_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env.pop("MNEMOLOG_DATABASE_URL", None)
    env = compiled_env(env, tmp_path / "bytecode")  # the warm-up below writes it, as a first run after install would

    def runner(command: list[str]):  # type: ignore[no-untyped-def]
        return lambda: subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    actions = {name: runner(command) for name, command in COMMANDS.items()}
    for action in actions.values():  # warm the page cache, write the bytecode and create the empty store
        action()
    times = interleaved(actions, ROUNDS[scale])
    base = times["python -c pass"]
    lines = [f"{name:<26} {ms(values)}  ratio {spread(ratios(values, base))}" for name, values in times.items()]
    report(f"start-up, {ROUNDS[scale]} interleaved rounds, empty SQLite home (goal: --help ≤ 5×)", lines)
    assert subprocess.run(COMMANDS["mnemolog --help"], env=env, capture_output=True, check=False).returncode == 0
