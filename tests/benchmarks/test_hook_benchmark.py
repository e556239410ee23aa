"""Benchmark: the SessionStart hook (`context --hook --json --agent codex`) on a store of 10,000 items.

Not part of the default run: ``pytest -m benchmark -s tests/benchmarks``.
No time is asserted: it prints the median wall time of interleaved runs of
the hook (in project A, which holds the items; and in an empty project) and
of ``python -c pass``, and the ratios. The goal (issue 12) is a hook well
under 0.5 s on such a store.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mnemolog.adapters.bootstrap import open_store
from mnemolog.adapters.settings import Settings
from support.cli import MNEMOLOG
from support.memory import git_project, item

pytestmark = pytest.mark.benchmark

ITEMS = 10_000
ROUNDS = 15
A_SCOPE = "git:example.com/acme/alpha"


def _wall(command: list[str], env: dict[str, str], stdin: str) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, input=stdin, text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def test_session_start_hook_on_ten_thousand_items_against_bare_python(tmp_path: Path) -> None:
    home = tmp_path / "data"
    store = open_store(Settings(home=home))
    try:
        for start in range(0, ITEMS, 1000):
            batch = [item(A_SCOPE if n % 2 else "global", f"fact number {n}: run make target-{n} before pushing") for n in range(start, start + 1000)]
            store.app.save_all(*batch)
        store.catch_up()
    finally:
        store.close()
    alpha = git_project(tmp_path / "alpha", "https://example.com/acme/alpha.git")
    empty = git_project(tmp_path / "empty", "https://example.com/acme/empty.git")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MNEMOLOG_")}, "MNEMOLOG_HOME": str(home), "NO_COLOR": "1"}
    hook = [MNEMOLOG, "context", "--hook", "--json", "--agent", "codex"]
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], ""),
        "hook, project with 10k items": (hook, json.dumps({"cwd": str(alpha)})),
        "hook, project with none": (hook, json.dumps({"cwd": str(empty)})),
    }
    for command, stdin in commands.values():  # warm the page cache
        _wall(command, env, stdin)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ROUNDS):
        for name, (command, stdin) in commands.items():
            times[name].append(_wall(command, env, stdin))
    medians = {name: statistics.median(values) for name, values in times.items()}
    base = medians["python -c pass"]
    lines = [f"\nSessionStart hook, median of {ROUNDS} interleaved runs ({ITEMS} items, SQLite):"]
    for name, median in medians.items():
        lines.append(f"  {name:<32} {median * 1000:7.1f} ms  {median / base:5.1f}x")
    print("\n".join(lines))
