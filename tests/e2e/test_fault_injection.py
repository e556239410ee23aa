"""SIGKILL a real ``mnemolog run`` at named moments and at random, on both backends; the next run recovers.

Named moments (``mnemolog.domain.fault_points``): a session recorded, an
extraction claim saved, the consolidation lease saved, the new folder staged,
the old folder set aside. After each kill one more ``run`` must exit 0 at
once (no claim or lease left to wait out, never busy), and then: every
session recorded exactly once and answered, views equal to a rebuild from the
log, no staging folder left, and the folder equal to an uninterrupted run's.

CI runs two named moments on SQLite, the lease on PostgreSQL and one random
kill per backend; ``-m slow`` runs every moment and 50 random kills on each.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from mnemolog.domain.fault_points import MOMENTS
from support.crash_runs import Pipeline, write_sessions

SESSIONS = 4
RANDOM_KILLS = 50


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sessions")
    write_sessions(folder, SESSIONS)
    return folder


@pytest.fixture(scope="module")
def reference(sessions: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], float]:
    """The folder of an uninterrupted run, and how long that run took."""
    pipeline = Pipeline(tmp_path_factory.mktemp("reference"), sessions)
    started = time.monotonic()
    done = pipeline.run()
    assert done.returncode == 0, done.stderr
    return pipeline.folder_snapshot(), time.monotonic() - started


def _recovered(pipeline: Pipeline, reference: dict[str, str]) -> None:
    again = pipeline.run(timeout=300)
    assert "Traceback" not in again.stderr, again.stderr
    assert again.returncode == 0, again.stderr  # not busy (4), not partial (3)
    state = pipeline.log_check()
    assert len(state["recorded"]) == SESSIONS and set(state["recorded"].values()) == {1}, state  # type: ignore[union-attr]
    assert state["unanswered"] == [], state
    assert state["views_equal_rebuild"]
    assert pipeline.leftovers() == []
    assert pipeline.folder_snapshot() == reference


def _kill_at(moment: str, root: Path, sessions: Path, database_url: str | None, reference: dict[str, str]) -> None:
    pipeline = Pipeline(root, sessions, database_url)
    if moment == "aside":
        assert pipeline.run().returncode == 0  # a folder to set aside
    killed = pipeline.run(MNEMOLOG_FAULT_AT=moment)
    assert killed.returncode == -9, f"the run never reached {moment}: {killed.returncode} {killed.stderr[-500:]}"
    _recovered(pipeline, reference)


@pytest.mark.parametrize("moment", ["claim", "staging"])
def test_a_kill_at_a_named_moment_on_sqlite(moment: str, tmp_path: Path, sessions: Path, reference) -> None:
    _kill_at(moment, tmp_path, sessions, None, reference[0])


@pytest.mark.postgres
def test_a_kill_at_the_lease_on_postgres(tmp_path: Path, sessions: Path, reference, postgres_dsn: str) -> None:
    from support.stores import reset_postgres

    reset_postgres(postgres_dsn)
    _kill_at("lease", tmp_path, sessions, postgres_dsn, reference[0])


def test_a_random_kill(tmp_path: Path, sessions: Path, reference, database_url: str | None) -> None:
    _random_kills(tmp_path, sessions, database_url, reference, kills=1, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize("moment", MOMENTS)
def test_every_named_moment(moment: str, tmp_path: Path, sessions: Path, reference, database_url: str | None) -> None:
    _kill_at(moment, tmp_path, sessions, database_url, reference[0])


@pytest.mark.slow
def test_fifty_random_kills(tmp_path: Path, sessions: Path, reference, database_url: str | None) -> None:
    _random_kills(tmp_path, sessions, database_url, reference, kills=RANDOM_KILLS, seed=16)


def _random_kills(root: Path, sessions: Path, database_url: str | None, reference, kills: int, seed: int) -> None:
    """Each kill on a fresh store at a random moment of a run (uniform over an uninterrupted run's length)."""
    from support.stores import reset_postgres

    folder, duration = reference
    chance = random.Random(seed)
    failures = []
    for n in range(kills):
        if database_url:
            reset_postgres(database_url)
        pipeline = Pipeline(root / f"kill-{n}", sessions, database_url)
        delay = chance.uniform(0.3, duration)
        code = pipeline.kill_after(delay)
        try:
            _recovered(pipeline, folder)
        except AssertionError as error:
            failures.append(f"kill {n} after {delay:.2f}s (exit {code}): {str(error)[:300]}")
    assert not failures, "\n".join(failures)
