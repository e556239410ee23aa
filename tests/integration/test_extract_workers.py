"""Several phase-1 workers on one store never extract the same session version twice."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.session import Session
from support.cli import MNEMOLOG, run_cli
from support.scripted_models import ScriptedExtractor, memory
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import reset_postgres

ALL = EligibilityPolicy(max_age=None)
SESSIONS = 40


def all_events(store) -> list:
    return [store.app.mapper.to_domain_event(n) for n in store.app.recorder.select_notifications(start=1, limit=100_000)]


def assert_each_version_extracted_once(events: list) -> Counter:
    extracted = Counter((e.originator_id, e.content_hash) for e in events if isinstance(e, Session.Extracted))
    assert len(extracted) == SESSIONS
    assert set(extracted.values()) == {1}
    return Counter(e.worker for e in events if isinstance(e, Session.ExtractionClaimed))


def write_sessions(folder: Path) -> None:
    for n in range(SESSIONS):
        write_rollout(folder, thread_id(n + 1), f"Task {n}: always run make lint before committing")


def test_four_worker_processes_on_postgres(postgres_dsn: str, tmp_path: Path) -> None:
    reset_postgres(postgres_dsn)
    write_sessions(tmp_path / "s")
    env = {"MNEMOLOG_HOME": str(tmp_path / "home"), "MNEMOLOG_DATABASE_URL": postgres_dsn, "NO_COLOR": "1"}
    assert run_cli("ingest", "--all", str(tmp_path / "s"), env=env).code == 0

    import os

    workers = [
        subprocess.Popen(
            [MNEMOLOG, "extract", "--all", "--model", "heuristic", "--workers", "2", "--json"],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    deadline = time.monotonic() + 180
    outputs = [w.communicate(timeout=max(1, deadline - time.monotonic())) for w in workers]
    assert all(w.returncode == 0 for w in workers), [o[1] for o in outputs]

    store = open_store(Settings(home=tmp_path / "home", database_url=postgres_dsn))
    try:
        claims = assert_each_version_extracted_once(all_events(store))
    finally:
        store.close()
    assert sum(claims.values()) >= SESSIONS


def test_four_worker_threads_with_a_slow_model(store_factory, tmp_path: Path) -> None:
    write_sessions(tmp_path / "s")
    store = store_factory()
    ingest_files(store, [tmp_path / "s"], ALL)

    def slow(transcript):
        time.sleep(0.02)  # long enough for the workers to race for the same sessions
        return memory("did the task", "### Task 1\nReusable knowledge:\n- make lint")

    # Four independent extract runs, each believing every session is pending.
    others = [store_factory() for _ in range(3)]
    for s in [store, *others]:
        s.catch_up()  # as each command's open would
    import threading

    threads = [
        threading.Thread(target=extract_all, args=(s, ScriptedExtractor(default=slow), ALL), kwargs={"workers": 2})
        for s in [store, *others]
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    claims = assert_each_version_extracted_once(all_events(store))
    assert len(claims) >= 2  # more than one worker really took part
