"""The store: the unit of work every service runs in (the log, its views, the clock, the keys), and how it is opened.

``open_store`` opens the configured store (SQLite in the home folder, or
PostgreSQL), ``open_memory_store`` one held in memory for fast service tests.
Tests hand it a clock or a real local service (a PostgreSQL DSN). ``psycopg``
and the PostgreSQL view are imported only on the PostgreSQL paths: a SQLite user
does not pay for them at start-up. The ports a service is given come from the
composition root (``Store.ports``, ``adapters.composition``); the files of the
embedded store from ``adapters.store_files``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemolog.adapters.data_keys import (
    KEY_FILE,
    AesGcmKeys,
    MemoryKeys,
    PostgresKeys,
    SqliteKeys,
)
from mnemolog.adapters.followers import Followed
from mnemolog.adapters.processes import ProcessWorkers, arm_fault_points
from mnemolog.adapters.settings import Settings, load_settings
from mnemolog.adapters.store_files import (
    OPEN_LOCK,
    TOKEN_COUNTS,
    VIEWS_FILE,
    compact_sqlite_files,
    file_lock,
    open_sqlite_views,
)
from mnemolog.adapters.tokens import count_tokens  # the tokenizer itself loads on the first count
from mnemolog.adapters.tombstone_keys import home_key, shared_key
from mnemolog.domain.application import MnemologApp, keyed_app_class
from mnemolog.domain.ports import Workers
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.view_reads import ViewReads
from mnemolog.projections.view_store import (
    MemoryView,
    catch_up,
    open_sqlite_view,
    open_views,
    rebuild,
)

if TYPE_CHECKING:  # annotations only (the history port's result classes load with the history commands)
    from mnemolog.adapters.composition import Ports
    from mnemolog.adapters.text_embedding import TextEmbedding
    from mnemolog.domain.history import HistoryReads
    from mnemolog.projections.recall_reads import ViewRecall

Clock = Callable[[], datetime]

SCHEMA_LOCK = 0x6D6E656D6F6C6F67  # "mnemolog": the advisory lock taken while creating tables


def utc_now() -> datetime:
    """The real clock."""
    return datetime.now(UTC)


class StoreError(Exception):
    """The store cannot be opened (bad URL, unreachable server, unwritable folder)."""


@dataclass
class Store:
    """An open store: the log (application) and its views."""

    app: MnemologApp
    view: MemoryView
    settings: Settings
    backend: str  # "sqlite" | "postgres" | "memory"
    location: str  # a path, or a URL without its password
    clock: Clock = field(default=utc_now)
    env: dict[str, str] = field(default_factory=dict)  # the eventsourcing environment of the log
    keys: AesGcmKeys = field(default_factory=MemoryKeys)  # the data keys the log's texts are sealed under
    workers: Workers = field(default_factory=ProcessWorkers)  # who works, and whether a claim's holder still does
    _key: bytes | None = field(default=None, repr=False)
    _seen: int = field(default=0, repr=False)  # the position the views were last brought to
    _matcher: TombstoneMatcher | None = field(default=None, repr=False)  # kept while the tombstones in force stay the same
    folder_at: int = field(default=0, repr=False)  # the position the configured memory folder was rendered at
    followed_at: int = field(default=0, repr=False)  # the position the followers were last brought to (store_session)
    followed: Followed | None = field(default=None, repr=False)  # what the last settle brought in step
    _kept: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)  # kept servings of an in-memory store

    def __post_init__(self) -> None:
        self._reads = ViewReads(self.view)

    @cached_property
    def ports(self) -> Ports:
        """The ports of this store's settings (the composition root: each port built when first asked for)."""
        from mnemolog.adapters.composition import Ports

        return Ports(self.settings)

    def catch_up(self) -> int:
        """Bring the views up to the end of the log, as other processes left it.

        The keys opened before are forgotten too: another process may have destroyed some.
        """
        self.keys.forget_opened()
        return self._advance_views()

    def _advance_views(self) -> int:
        applied = catch_up(self.app, self.view)
        self._seen = max(self._seen, self.app.last_written)
        return applied

    def reads(self) -> ViewReads:
        """The views, caught up with everything this process wrote: the one read-your-writes wait."""
        if self._seen < self.app.last_written:
            self._advance_views()  # read-your-writes: the views reach what this process wrote (its keys stay opened)
        return self._reads

    def matcher(self) -> TombstoneMatcher:
        """The tombstone matcher over the tombstones in force now.

        The same matcher while those tombstones stay the same (read from the
        views on every call, so a forget or lift by another process counts at
        once): what it remembers of the texts it matched is kept between reads.
        """
        key, rules = self.tombstone_key(), self.reads().tombstone_rules()
        if self._matcher is None or not self._matcher.same_as(key, rules):
            self._matcher = TombstoneMatcher(key, rules)
        return self._matcher

    def history(self) -> HistoryReads:
        """The history reads (explain, audit, as-of, valid-at) over the log and the views, caught up like ``reads``."""
        from mnemolog.projections.history import LogHistory

        return LogHistory(self.app, self.reads())

    def recall(self) -> ViewRecall:
        """The recall reads (history excerpts, nearest texts by meaning), caught up like ``reads``."""
        from mnemolog.projections.recall_reads import ViewRecall

        self.reads()
        embedding = _embedding(self.settings)
        embed_query = embedding.embed_query if embedding.model() is not None else None
        position = lambda: self.view.position(self.app.name)  # noqa: E731
        return ViewRecall(self.view, embed_query, embedding.reason, position, self._vectors, embedding.fusion_weight)

    @cached_property
    def _vectors(self) -> Any:
        """The stored vectors of each reader's scope, held while the views stand still (the MCP server keeps them warm)."""
        from mnemolog.projections.vectors import VectorIndex

        return VectorIndex()

    def log_position(self) -> int:
        """The notification id of the log's last event (0: empty)."""
        return self.app.max_notification_id()

    def views_position(self) -> int:
        """The last event of the log the views have applied."""
        return self.view.position(self.app.name)

    def rebuild(self) -> int:
        """Drop the views and replay the whole log (once: views rebuilt as the store opened are not rebuilt again)."""
        done, self.view.replayed_on_open = self.view.replayed_on_open, None
        if done is not None and done[1] == self.app.max_notification_id():  # nothing appended since
            return done[0]
        return rebuild(self.app, self.view)

    def follow(self, timeout: float | None = None, interval: float = 1.0, stop: threading.Event | None = None) -> None:
        """Keep the views up to date as other processes append, until ``timeout`` or ``stop``.

        PostgreSQL: the library's ProjectionRunner (LISTEN/NOTIFY), which writes
        each view update and its tracking record in one transaction. SQLite
        cannot be subscribed to: poll the log every ``interval`` seconds.
        """
        stop = stop or threading.Event()
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.backend == "postgres":
            from eventsourcing.projection import ProjectionRunner
            from mnemolog.projections.postgres_view import MemoryProjection, counting_view_class

            self.catch_up()  # the runner starts from the tracked position; begin there
            with ProjectionRunner(
                application_class=keyed_app_class(self.keys),  # the runner builds its own app: it must open sealed text
                projection_class=MemoryProjection,
                view_class=counting_view_class(count_tokens, _embedding(self.settings).embed_texts),
                env=self.env,
            ) as runner:
                while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
                    runner.run_forever(timeout=interval)  # re-raises an error of the runner's thread
            return
        while not stop.is_set():
            self.catch_up()  # SQLite cannot be subscribed to: poll
            if deadline is not None and time.monotonic() >= deadline:
                return
            stop.wait(interval)

    def keep_served(self, record: dict[str, Any]) -> None:
        """Keep a serving the log would not take now, for the next store session (``<home>/served-spool``)."""
        if self.backend == "memory":
            self._kept[f"{record['id']}.json"] = record
            return
        from mnemolog.adapters.served_spool import SPOOL_FOLDER, ServedSpool

        ServedSpool(self.settings.home / SPOOL_FOLDER).keep(record)

    def kept_served(self) -> list[tuple[str, dict[str, Any]]]:
        """The kept servings not yet recorded: (name, record)."""
        if self.backend == "memory":
            return list(self._kept.items())
        from mnemolog.adapters.served_spool import SPOOL_FOLDER, ServedSpool

        return ServedSpool(self.settings.home / SPOOL_FOLDER).kept()

    def forget_kept(self, name: str) -> None:
        """Drop a kept serving the log now holds."""
        if self.backend == "memory":
            self._kept.pop(name, None)
            return
        from mnemolog.adapters.served_spool import SPOOL_FOLDER, ServedSpool

        ServedSpool(self.settings.home / SPOOL_FOLDER).forget(name)

    def tombstone_key(self) -> bytes:
        """The key for tombstone hashes, kept outside the log.

        Configured (``tombstone_key``), else generated once: into the home
        folder for SQLite, or into the PostgreSQL database's own settings table
        (not the event log, not a projection), so that every machine sharing
        the store matches the same tombstones.
        """
        configured = self.settings.tombstone_key
        if configured is not None:
            return configured.get_secret_value().encode()
        if self._key is None:
            if self.backend == "postgres":
                assert self.settings.database_url is not None
                self._key = shared_key(self.settings.database_url.get_secret_value())
            else:
                self._key = home_key(self.settings.home)
        return self._key

    def purge_copies(self) -> None:
        """After keys were destroyed: rebuild the views from the log and compact every file of the store.

        The views held the erased text in clear; rebuilt, they hold what the
        log still opens. SQLite keeps deleted rows in free pages and recent
        pages in its write-ahead log: the view and key files are vacuumed and
        every write-ahead log is checkpointed and truncated (the data keys live
        in ``events.sqlite``; deleted with ``secure_delete``). PostgreSQL's
        rebuild replaces the view tables; the key table is vacuumed in full.
        """
        self._matcher = None  # it remembers clean texts it read: none of them outlives the erase
        self.rebuild()
        self.keys.compact()
        # Its keys are plain SHA-256 digests of texts counted before (a profile, summary lines): one could
        # confirm a guess of an erased text. A cache: the next read counts again.
        (Path(self.settings.home) / TOKEN_COUNTS).unlink(missing_ok=True)
        if self.backend == "sqlite":
            compact_sqlite_files(Path(self.location))

    def close(self) -> None:
        """Release connections (the log's, the views' and the key store's)."""
        self.app.close()
        self.view.close()
        self.keys.close()


def postgres_params(url: str) -> dict[str, Any]:
    """Connection parameters for eventsourcing's PostgresDatastore from a URL."""
    from psycopg.conninfo import conninfo_to_dict

    info = conninfo_to_dict(url)
    return {
        "dbname": str(info.get("dbname") or "mnemolog"),
        "host": str(info.get("host") or "localhost"),
        "port": str(info.get("port") or "5432"),
        "user": str(info.get("user") or "mnemolog"),
        "password": str(info.get("password") or ""),
    }


def _redacted_url(url: str) -> str:
    p = postgres_params(url)
    return f"postgresql://{p['user']}@{p['host']}:{p['port']}/{p['dbname']}"


def open_store(settings: Settings | None = None, clock: Clock = utc_now) -> Store:
    """Open the configured store, creating its schema on first use."""
    settings = settings or load_settings()
    arm_fault_points()  # the fault-injection suite's moments (a no-op unless MNEMOLOG_FAULT_AT is set)
    url = settings.database_url.get_secret_value() if settings.database_url else None
    try:
        if url:
            import psycopg
            from mnemolog.projections.postgres_view import open_postgres_view

            params = postgres_params(url)
            env = {
                "PERSISTENCE_MODULE": "eventsourcing.postgres",
                "POSTGRES_DBNAME": params["dbname"],
                "POSTGRES_HOST": params["host"],
                "POSTGRES_PORT": params["port"],
                "POSTGRES_USER": params["user"],
                "POSTGRES_PASSWORD": params["password"],
                "POSTGRES_POOL_SIZE": "2",
                "CREATE_TABLE": "y",
                # A batch of events in one INSERT over four arrays (adapters/batch_postgres_recorder.py).
                "APPLICATION_RECORDER_TOPIC": "mnemolog.adapters.batch_postgres_recorder:BatchPostgresApplicationRecorder",
            }
            pg_keys = PostgresKeys(url)
            # Several processes may open a new store at once; DDL must not race.
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
                try:
                    app = MnemologApp(env=env, keys=pg_keys)
                    view: MemoryView = open_views(app, open_postgres_view(params, count_tokens, _embedding(settings).embed_texts))
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))
            return Store(app, view, settings, "postgres", _redacted_url(url), clock, env, pg_keys)
        home = Path(settings.home)
        home.mkdir(parents=True, exist_ok=True)
        events = home / "events.sqlite"
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": str(events),
            "SQLITE_LOCK_TIMEOUT": "30",
            "CREATE_TABLE": "y",
            # A batch of events in multi-row INSERT statements (adapters/batch_recorders.py).
            "APPLICATION_RECORDER_TOPIC": "mnemolog.adapters.batch_recorders:BatchSQLiteApplicationRecorder",
        }
        # Several processes may open a new store at once: the library's table creation and
        # migration tracking race ("Failed to record tracking for __migration__ 1"), so
        # schema creation, like PostgreSQL's under its advisory lock, is one process at a time.
        with file_lock(home / OPEN_LOCK):
            # The data keys live in the log's own file (made owner-only by ensure_table, before the
            # library opens it): new keys are written in the events' transaction. A store made before
            # kept them in data-keys.sqlite: moved in here, that file overwritten and removed.
            file_keys = SqliteKeys(events)
            file_keys.ensure_table()
            file_keys.adopt(home / KEY_FILE)
            app = MnemologApp(env=env, keys=file_keys)
            view = open_sqlite_views(app, home / VIEWS_FILE, _embedding(settings).embed_texts)
        return Store(app, view, settings, "sqlite", str(home), clock, env, file_keys)
    except Exception as error:  # any driver error opening the store is one user-facing message
        if isinstance(error, StoreError):
            raise
        raise StoreError(f"cannot open the store: {error}") from error


def open_memory_store(settings: Settings, clock: Clock = utc_now) -> Store:
    """A store held in memory (the log in the library's POPO recorder, the views in SQLite ``:memory:``).

    For fast service tests: the same services, reads and projections as a real
    store, nothing on disk but the tombstone key in ``settings.home``.
    """
    env = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    keys = MemoryKeys()
    view = open_sqlite_view(":memory:", count_tokens, _embedding(settings).embed_texts)
    return Store(MnemologApp(env=env, keys=keys), view, settings, "memory", "memory", clock, env, keys)


def _embedding(settings: Settings) -> TextEmbedding:
    """The settings' embedding model (loaded when first asked to embed)."""
    from mnemolog.adapters.text_embedding import text_embedding

    return text_embedding(settings.embedding_model)
