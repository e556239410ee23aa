"""Eight ``mnemolog`` processes at once on a new store, both backends: each exits 0, 3 or 4, never with a traceback.

Every process is a real ``mnemolog run`` over the same sessions and the same
memory folder: they race to create the schema (SQLite's first open), to
record the same sessions, to claim the same extractions, for the lease and
to swap the folder. A process that does not exit 0 says why in one line on
stderr (busy: 4). Afterwards the store holds each session once and its views
equal a rebuild. Eight processes also open one new store at the same instant
(the race that failed SQLite's first open). CI runs one race of each per
backend; ``-m slow`` runs eight ``run``s, five rounds of mixed commands and
twenty rounds of first opens per backend.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.crash_runs import Pipeline, write_sessions

PROCESSES = 8
ALLOWED = {0, 3, 4}


def _race(root: Path, database_url: str | None, commands: list[tuple[str, ...]]) -> None:
    sessions = root / "sessions"
    write_sessions(sessions)
    pipeline = Pipeline(root, sessions, database_url)
    started = [pipeline.start(*command) for command in commands]
    finished: list[tuple[int, str]] = []
    for process in started:
        try:
            _, err = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        finished.append((process.returncode, err))
    problems = []
    for code, err in finished:
        if "Traceback" in err or code not in ALLOWED:
            problems.append(f"exit {code}: {err[-800:]}")
        elif code != 0:
            said = [line for line in err.splitlines() if line.startswith(("error:", "busy:", "warning:"))]
            if not said:
                problems.append(f"exit {code} without a line saying why: {err[-300:]}")
    assert not problems, "\n".join(problems)
    state = pipeline.log_check()
    assert set(state["recorded"].values()) == {1}, state  # type: ignore[union-attr]
    assert state["views_equal_rebuild"]
    # The folder is whole: one of the runs' renderings, not a mix, and nothing left beside it.
    assert (pipeline.folder / "memory_summary.md").is_file() and pipeline.leftovers() == []
    finished_run = pipeline.run()
    assert finished_run.returncode == 0, finished_run.stderr


def test_eight_commands_on_a_new_store(tmp_path: Path, database_url: str | None) -> None:
    sessions = str(tmp_path / "sessions")
    _race(tmp_path, database_url, [("ingest", sessions, "--all")] * 5 + [("run", sessions, "--all")] * 3)


_OPEN = """
import sys, time
from mnemolog.adapters.store import StoreError, open_store
from mnemolog.adapters.settings import Settings
at = float(sys.argv[3])
while time.time() < at:
    pass
try:
    open_store(Settings(home=sys.argv[1], database_url=sys.argv[2] or None)).close()
    print("ok")
except StoreError as error:
    print(error)
"""


def _open_at_once(root: Path, database_url: str | None, rounds: int) -> list[str]:
    """``rounds`` times, eight processes open one new store at the same instant; what each that failed said."""
    import sys
    import time

    from support.stores import reset_postgres

    failed = []
    for n in range(rounds):
        if database_url:
            reset_postgres(database_url)
        at = str(time.time() + 3)  # every process is loaded and spinning when the moment comes
        command = [sys.executable, "-c", _OPEN, str(root / f"home-{n}"), database_url or "", at]
        started = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(PROCESSES)]
        for process in started:
            out, err = process.communicate(timeout=120)
            if out.strip() != "ok" or process.returncode != 0:
                failed.append(f"round {n}: {out.strip()} {err[-500:]}")
    return failed


def test_eight_processes_open_a_new_store_at_the_same_instant(tmp_path: Path, database_url: str | None) -> None:
    assert _open_at_once(tmp_path, database_url, rounds=2) == []


@pytest.mark.slow
def test_twenty_rounds_of_eight_first_opens(tmp_path: Path, database_url: str | None) -> None:
    assert _open_at_once(tmp_path, database_url, rounds=20) == []


@pytest.mark.slow
def test_eight_runs_on_a_new_store(tmp_path: Path, database_url: str | None) -> None:
    _race(tmp_path, database_url, [()] * PROCESSES)


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(5))
def test_eight_mixed_commands_on_a_new_store(tmp_path: Path, database_url: str | None, round_: int) -> None:
    sessions = str(tmp_path / "sessions")
    mixed: list[tuple[str, ...]] = [
        ("ingest", sessions, "--all"), ("run", sessions, "--all"), ("extract", "--all"), ("run", sessions, "--all"),
        ("consolidate", "--all"), ("run", sessions, "--all"), ("render",), ("run", sessions, "--all"),
    ]
    _race(tmp_path, database_url, mixed[round_:] + mixed[:round_])
