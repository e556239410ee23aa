"""Stores for tests: the same code on SQLite and PostgreSQL, with a clock tests control.

``store_factory`` is parametrised over both backends; a test that takes it runs
twice. On PostgreSQL each test starts from an empty schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_memory_store, open_store

BACKENDS = ("sqlite", "postgres")


class FixedClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        """Move forward by a timedelta given as keywords (hours=6, days=1, ...)."""
        self.now += timedelta(**delta)
        return self.now

    def past_the_saves(self, **delta: float) -> datetime:
        """Move to this long after the real time of the saves so far (events are stamped by the real clock:
        a session's import time, which the retention window counts from, is one of them)."""
        self.now = max(self.now, datetime.now(UTC)) + timedelta(**delta)
        return self.now


def reset_postgres(dsn: str) -> None:
    """Drop everything in the database's public schema."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


StoreFactory = Callable[..., Store]


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's config, home folders or API keys."""
    home = tmp_path_factory.mktemp("mnemolog-home")
    monkeypatch.setenv("MNEMOLOG_HOME", str(home))
    for name in ("MNEMOLOG_DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn."""
    return str(request.param)


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """A clean PostgreSQL database URL for the postgres run, None for SQLite."""
    if backend != "postgres":
        return None
    dsn = str(request.getfixturevalue("postgres_dsn"))
    reset_postgres(dsn)
    return dsn


@pytest.fixture
def store_factory(database_url: str | None, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens stores on the test's backend; all of them share one log."""
    opened: list[Store] = []

    def make(clock: Callable[[], datetime] | None = None, **overrides: Any) -> Store:
        settings = Settings(home=tmp_path / "home", database_url=database_url, **overrides)
        store = open_store(settings, clock=clock or FixedClock())
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def memory_store(tmp_path: Path) -> Iterator[Store]:
    """A store in memory (POPO log, SQLite ``:memory:`` views) with a FixedClock, for fast service tests."""
    store = open_memory_store(Settings(home=tmp_path / "home"), clock=FixedClock())
    yield store
    store.close()

