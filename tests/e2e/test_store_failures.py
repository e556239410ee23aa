"""A corrupt views file, a full disk, a busy consolidation and another project's item, as a user meets them."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.consolidation import PhaseTwoLease
from support.cli import run_cli
from support.crash_runs import write_sessions
from support.memory import item, save
from support.sessions import thread_id, write_rollout


def _env(home: Path) -> dict[str, str]:
    return {"MNEMOLOG_HOME": str(home), "MNEMOLOG_EXTRACT_MODEL": "heuristic", "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic"}


def _pipeline(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_sessions(tmp_path / "sessions")
    assert run_cli("run", str(tmp_path / "sessions"), "--all", env=_env(home)).code == 0
    return home


@pytest.mark.parametrize("damage", ["garbage", "truncated", "not sqlite"])
def test_a_corrupt_views_file_is_rebuilt_from_the_log(tmp_path: Path, damage: str) -> None:
    home = _pipeline(tmp_path)
    before = run_cli("context", "--project", "git:github.com/acme/api", env=_env(home)).out
    views = home / "views.sqlite"
    data = views.read_bytes()
    views.write_bytes({"garbage": data[:100] + b"\x00garbage" * 2000 + data[16100:],
                       "truncated": data[: len(data) // 3], "not sqlite": b"hello, I am not a database"}[damage])

    after = run_cli("context", "--project", "git:github.com/acme/api", env=_env(home))
    assert after.code == 0, after.err
    assert "rebuilt from the log" in after.err and after.err.count("\n") == 1
    assert after.out == before
    assert any(p.name.startswith("views.sqlite.corrupt-") for p in home.iterdir())
    assert run_cli("context", "--project", "git:github.com/acme/api", env=_env(home)).err == ""  # once


def test_a_full_disk_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemolog.domain.application import MnemologApp

    home = _pipeline(tmp_path)
    write_rollout(tmp_path / "sessions" / "more", thread_id(50), "Use the staging database for load tests.")

    def disk_full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")  # what SQLite says when a write finds no room

    monkeypatch.setattr(MnemologApp, "save_all", disk_full)
    for args in (("note", "Always use pnpm"), ("forget", "make lint"), ("ingest", str(tmp_path / "sessions"), "--all")):
        result = run_cli(*args, env=_env(home))
        assert result.code == 1, (args, result.out, result.err)
        assert result.err.startswith("error: the disk is full") and result.err.count("\n") == 1, result.err

    def no_room(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "mkdir", no_room)
    doctor = run_cli("doctor", env=_env(tmp_path / "fresh-home"))
    assert doctor.code == 1 and doctor.err.startswith("error: the disk is full"), doctor.err


def test_a_store_locked_too_long_is_one_busy_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eventsourcing.persistence import OperationalError
    from mnemolog.domain.application import MnemologApp

    home = _pipeline(tmp_path)

    def locked(*args: object, **kwargs: object) -> None:
        raise OperationalError("database is locked") from sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(MnemologApp, "save_all", locked)
    result = run_cli("note", "Always use pnpm", env=_env(home))
    assert result.code == 4, (result.out, result.err)
    assert result.err.startswith("busy: another mnemolog process kept the store locked") and result.err.count("\n") == 1, result.err


def test_run_exits_4_when_another_consolidation_holds_the_lease(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_sessions(tmp_path / "sessions")
    store = open_store(Settings(home=home))
    try:
        lease = PhaseTwoLease()
        lease.take(UUID(int=9), "another-host:123:1:0", store.clock(), timedelta(minutes=30))
        store.app.save_all(lease)
    finally:
        store.close()
    result = run_cli("run", str(tmp_path / "sessions"), "--all", env=_env(home))
    assert result.code == 4, result.err
    assert [line for line in result.err.splitlines() if line.startswith("busy:")]


def test_explain_and_audit_are_scoped_like_show(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        theirs, = save(store, item("git:github.com/acme/a", "Deploy A with the blue pipeline"))
        ours, = save(store, item("git:github.com/acme/b", "Deploy B with the green pipeline"))
    finally:
        store.close()
    env = {"MNEMOLOG_HOME": str(home)}
    b = ("--project", "git:github.com/acme/b")

    shown = run_cli("show", theirs, *b, env=env)
    explained = run_cli("explain", theirs, *b, env=env)
    assert shown.code == explained.code == 5
    assert "blue" not in explained.out + explained.err
    assert run_cli("explain", ours, *b, "--json", env=env).json()["now"]["text"].startswith("Deploy B")
    by_words = run_cli("explain", "deploy pipeline", *b, "--json", env=env).json()
    assert [c["item"] for c in by_words["candidates"]] == [ours]
    assert run_cli("explain", "blue pipeline", "--project", "git:github.com/acme/a", "--json", env=env).json()["item"] == theirs
