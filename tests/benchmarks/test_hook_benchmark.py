"""Benchmark: the SessionStart hook (`context --hook --json --agent codex`) on a store of 10,000 items.

Not part of the default run: ``pytest -m benchmark -s tests/benchmarks``.
No time is asserted: it prints the median wall and CPU time of interleaved
runs of the hook (in project A, which holds the items; in an empty project;
and in one whose name is long enough to go through redaction) and of
``python -c pass``, and the ratios. The goal (issue 29) is a hook ≤ 4×
``python -c pass`` on such a store. The processes run with their bytecode
written (``support.cli.compiled_env``), as an installed mnemolog runs.
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
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import MNEMOLOG, compiled_env
from support.memory import git_project, item

pytestmark = pytest.mark.benchmark

ITEMS = 10_000
ROUNDS = 15
A_SCOPE = "git:example.com/acme/alpha"


def _wall(command: list[str], env: dict[str, str], stdin: str) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of one run of ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


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
    # A remote with a long name may hold a secret: its scope key goes through redaction (once per folder).
    long_name = git_project(tmp_path / "long", "https://example.com/acme/a-repository-with-a-long-name.git")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MNEMOLOG_")}, "MNEMOLOG_HOME": str(home), "NO_COLOR": "1"}
    env = compiled_env(env, tmp_path / "bytecode")  # the warm-up below writes it, as a first run after install would
    hook = [MNEMOLOG, "context", "--hook", "--json", "--agent", "codex"]
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], ""),
        "hook, project with 10k items": (hook, json.dumps({"cwd": str(alpha)})),
        "hook, project with none": (hook, json.dumps({"cwd": str(empty)})),
        "hook, project with a long name": (hook, json.dumps({"cwd": str(long_name)})),
    }
    for command, stdin in commands.values():  # warm the page cache and write the bytecode
        _wall(command, env, stdin)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(ROUNDS):
        for name, (command, stdin) in commands.items():
            times[name].append(_wall(command, env, stdin))
    walls = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpus = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    lines = [f"\nSessionStart hook, median of {ROUNDS} interleaved runs ({ITEMS} items, SQLite; wall, then CPU):"]
    for name in commands:
        wall, cpu = walls[name], cpus[name]
        lines.append(
            f"  {name:<32} {wall * 1000:7.1f} ms  {wall / walls['python -c pass']:5.1f}x   CPU {cpu * 1000:7.1f} ms  {cpu / cpus['python -c pass']:5.1f}x"
        )
    print("\n".join(lines))
