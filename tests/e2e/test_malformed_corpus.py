"""The malformed-input corpus through the real command: no traceback, no hang, every good session in.

The bounded run (every CI run) ingests the whole corpus in one process, on
each backend, and checks each case's expected outcome; the full run (``-m slow``) also ingests
every case on its own, beside good sessions, in a fresh store each time, and
then runs the whole pipeline over the corpus twice (the second run must be
clean and record nothing).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mnemolog.adapters.session_files import display_path
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import Result, spawn_cli
from support.malformed_corpus import (
    CASES,
    FIELD_DROPPED,
    FILE_SKIPPED,
    IGNORED,
    INGESTED,
    LIMITS,
    LINE_SKIPPED,
    Case,
    good_sessions,
    write_corpus,
)

TIMEOUT = 120  # a hang fails the test instead of blocking the run


def _env(home: Path, database_url: str | None = None) -> dict[str, str]:
    return {"MNEMOLOG_HOME": str(home), "MNEMOLOG_EXTRACT_MODEL": "heuristic",
            "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic", **LIMITS,
            **({"MNEMOLOG_DATABASE_URL": database_url} if database_url else {})}


def _no_traceback(result: Result) -> None:
    assert "Traceback" not in result.err + result.out, result.err[-3000:]


def _recorded(home: Path, database_url: str | None = None) -> dict[str, str]:
    store = open_store(Settings(home=home, database_url=database_url))
    try:
        store.catch_up()
        return store.reads().known_files()
    finally:
        store.close()


def _check_case(number: int, case: Case, path: Path, report: dict, recorded: dict[str, str]) -> list[str]:
    """What is wrong with one case's outcome (empty: as expected)."""
    shown = display_path(os.path.abspath(path))
    errors = [e for e in report["errors"] if shown in e["path"] or shown in e["error"]]
    warnings = [w for w in report["warnings"] if shown in w]
    problems = []
    if case.expect == FILE_SKIPPED:
        if shown in recorded:
            problems.append("recorded, expected skipped")
        if len(errors) != 1:
            problems.append(f"expected one error naming the file, got {errors}")
    elif case.expect == IGNORED:
        if shown in recorded or errors:
            problems.append("expected to be ignored")
    else:
        if shown not in recorded:
            problems.append(f"not recorded (errors: {errors})")
        if errors:
            problems.append(f"unexpected error {errors}")
        if case.expect == LINE_SKIPPED and not any("skipped" in w for w in warnings):
            problems.append(f"expected a warning naming a skipped line, got {warnings}")
        if case.expect == FIELD_DROPPED and not any("ignored" in w for w in warnings):
            problems.append(f"expected a warning naming the field, got {warnings}")
        if case.expect == INGESTED and warnings:
            problems.append(f"expected no warning, got {warnings}")
    return [f"case {number} ({case.name}): {p}" for p in problems]


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 60
    kinds = {case.expect for case in CASES}
    assert kinds == {INGESTED, LINE_SKIPPED, FIELD_DROPPED, FILE_SKIPPED, IGNORED}


def test_the_whole_corpus_in_one_ingest(tmp_path: Path, database_url: str | None) -> None:
    folder, home = tmp_path / "sessions", tmp_path / "home"
    paths = write_corpus(folder)
    good = good_sessions(folder)

    first = spawn_cli("ingest", str(folder), "--all", "--json", env=_env(home, database_url), timeout=TIMEOUT)
    _no_traceback(first)
    assert first.code == 3, first.err[-2000:]  # partial: some files were skipped
    report = first.json()
    recorded = _recorded(home, database_url)
    assert all(display_path(p) in recorded for p in good)
    problems = [p for number, path in paths.items() for p in _check_case(number, CASES[number - 1], path, report, recorded)]
    assert not problems, "\n".join(problems)

    # The next run: nothing new is recorded, nothing crashes, the same files are reported.
    again = spawn_cli("ingest", str(folder), "--all", "--json", env=_env(home, database_url), timeout=TIMEOUT)
    _no_traceback(again)
    second = again.json()
    assert second["new"] == 0 and second["updated"] == 0, second
    assert sorted(e["path"] for e in second["errors"]) == sorted(e["path"] for e in report["errors"])
    assert _recorded(home, database_url) == recorded  # nothing stored was lost


@pytest.mark.slow
@pytest.mark.parametrize("number", range(1, len(CASES) + 1), ids=[c.name for c in CASES])
def test_each_case_alone_beside_good_sessions(tmp_path: Path, number: int) -> None:
    case = CASES[number - 1]
    folder, home = tmp_path / "sessions", tmp_path / "home"
    path = write_corpus(folder, [case])[number]
    good = good_sessions(folder)
    result = spawn_cli("run", str(folder), "--all", "--json", "--out", str(tmp_path / "memories"), env=_env(home), timeout=TIMEOUT)
    _no_traceback(result)
    assert result.code in (0, 3), result.err[-2000:]
    report = result.json()["ingest"]
    recorded = _recorded(home)
    assert all(display_path(p) in recorded for p in good)
    assert not _check_case(number, case, path, report, recorded)
    again = spawn_cli("run", str(folder), "--all", "--json", "--out", str(tmp_path / "memories"), env=_env(home), timeout=TIMEOUT)
    _no_traceback(again)
    assert again.code == result.code
    assert again.json()["ingest"]["new"] == 0 and again.json()["ingest"]["updated"] == 0
