"""The data keys sealed text is encrypted under (crypto-shredding), kept outside the log's events.

AES-256-GCM from the ``cryptography`` package: a random 96-bit nonce per
seal, the aggregate id as associated data (a sealed text moved onto another
aggregate does not open). Keys are random, one set per aggregate; the newest
is current. Where they live:

- SQLite: the table ``mnemolog_data_keys`` in the log's own file
  (``events.sqlite``, owner-only), beside the event table, not in it; deleted
  with ``secure_delete`` so a destroyed key's bytes are overwritten, not left
  in a free page. A store made before kept them in ``data-keys.sqlite``:
  ``SqliteKeys.adopt`` moves them in on open and overwrites that file;
- PostgreSQL: the table ``mnemolog_data_keys`` in the same database (not the
  event log, not a projection), vacuumed in full after keys are destroyed;
- in memory, for the in-memory store of tests.

Looking up a subject's current key is never cached: another process may have
rotated it. Opened keys are cached (a key never changes), dropped from the
cache when this process destroys them, and all dropped when the store catches
up with what other processes wrote (``forget_opened``): another process may
have destroyed some, and a long-lived process (the MCP server) must not open
the past with them. A key not in the cache is read
with the ``READ_AHEAD`` keys made after it: the log is read in the order its
aggregates were made, which is the order their keys were made, so a replay
of the whole log (a rebuild) reads the key table a page at a time instead of
a key per aggregate. The cache holds at most ``CACHED_KEYS`` keys.

Keys ``seal`` makes are held until the event recorders store them, in the
events' own transaction (``batch_recorders``, ``batch_postgres_recorder``):
one statement for a batch's keys, one commit for keys and events. A new
aggregate (``new``: its first event) has no key yet, so none is looked up.
"""

from __future__ import annotations

import binascii
import contextlib
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_TABLE = "mnemolog_data_keys"
KEY_FILE = "data-keys.sqlite"  # where SQLite stores kept their keys before (moved into the log's file on open)
NONCE_BYTES = 12
READ_AHEAD = 500  # keys read with a key that is not cached (made after it)
CACHED_KEYS = 20_000  # opened keys kept (the oldest dropped first)
CHECKPOINT_WAIT = 30.0  # seconds a full checkpoint waits for other processes' readers

KeyRow = tuple[str, str, bytes]
"""(subject, key id, key): a key as the key tables store it."""


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")  # base64.b64encode without its wrapper


def _new_key() -> tuple[str, bytes]:
    """A new key's id and its 256 random bits.

    The id is 32 hex digits, as ``uuid4().hex`` made them: the time in
    microseconds, then 64 random bits. Ids made one after another sort one
    after another, so the key table's index on them grows at its end instead
    of at a random page (half the cost of storing a batch's keys).
    """
    raw = os.urandom(40)
    return (time.time_ns() // 1000).to_bytes(8, "big").hex() + raw[:8].hex(), raw[8:]


class AesGcmKeys(ABC):
    """Seal and open with AES-GCM; subclasses keep the keys (the ``DataKeys`` port)."""

    def __init__(self) -> None:
        self._opened: dict[str, AESGCM] = {}  # key id -> the cipher of that key
        self._lock = threading.Lock()
        # subject (its UUID's int: hashed in C) -> (key id, key, the subject as text, its cipher): made, not yet stored
        self._unsaved: dict[int, tuple[str, bytes, str, AESGCM]] = {}

    # -- storage, per backend

    @abstractmethod
    def _current(self, subject: str) -> tuple[str, bytes] | None:
        """The subject's newest key (id, bytes), or None."""

    @abstractmethod
    def _find(self, key_id: str) -> list[tuple[str, bytes]]:
        """A key by id with the ``READ_AHEAD`` keys made after it, as (id, bytes); empty when it was destroyed (or never existed)."""

    @abstractmethod
    def _add(self, subject: str, key_id: str, key: bytes) -> None:
        """Store a new key for the subject (it becomes current)."""

    def _add_all(self, keys: list[KeyRow]) -> None:
        """Store new (subject, key id, key) rows, in order, all or none."""
        for row in keys:
            self._add(*row)

    @abstractmethod
    def _destroy_all_but_current(self, subject: str) -> list[str]:
        """Destroy the subject's keys but the newest; their ids."""

    # -- the port

    def seal(self, subject: UUID, plaintext: bytes, new: bool = False) -> dict[str, str]:
        """``plaintext`` under the subject's current key (made on first use; ``new``: no key can exist yet)."""
        with self._lock:
            held = self._unsaved.get(subject.int)
            if held is None:
                name = str(subject)
                found = None if new else self._current(name)
                if found is None:
                    key_id, key = _new_key()
                    held = self._unsaved[subject.int] = (key_id, key, name, AESGCM(key))
                else:
                    held = (found[0], found[1], name, AESGCM(found[1]))
        key_id, _, name, cipher = held
        nonce = os.urandom(NONCE_BYTES)
        return {"k": key_id, "c": _b64(nonce + cipher.encrypt(nonce, plaintext, name.encode()))}

    def unsaved_keys(self, subjects: Iterable[UUID] | None = None) -> list[KeyRow]:
        """The (subject, key id, key) rows ``seal`` made and nobody stored yet (of ``subjects`` only, when given)."""
        with self._lock:
            held = self._unsaved
            if subjects is None:
                return [(name, key_id, key) for key_id, key, name, _ in held.values()]
            rows = []
            seen: set[int] = set()
            for subject in subjects:  # in the order given (the log's): the order keys are read back in
                number = subject.int
                entry = held.get(number)
                if entry is not None and number not in seen:
                    seen.add(number)
                    rows.append((entry[2], entry[0], entry[1]))
            return rows

    def saved(self, keys: list[KeyRow]) -> None:
        """``keys`` were committed: they are no longer held here."""
        if not keys:
            return
        done = {key_id for _, key_id, _ in keys}
        with self._lock:
            for subject in [s for s, held in self._unsaved.items() if held[0] in done]:
                del self._unsaved[subject]

    def _save_unsaved(self) -> None:
        if self._unsaved:
            self._add_all([(name, key_id, key) for key_id, key, name, _ in self._unsaved.values()])
            self._unsaved.clear()

    def open(self, subject: UUID, sealed: dict[str, str]) -> bytes | None:
        """The plaintext, or None when its key was destroyed."""
        key_id = sealed.get("k", "")
        cipher = self._opened.get(key_id)
        if cipher is None:
            with self._lock:
                unsaved = {held[0]: held[1] for held in self._unsaved.values()}
                found = [(key_id, unsaved[key_id])] if key_id in unsaved else self._find(key_id)
            if not found or found[0][0] != key_id:
                return None
            for other_id, key in found:
                if other_id not in self._opened:
                    self._opened[other_id] = AESGCM(key)
            while len(self._opened) > CACHED_KEYS:
                del self._opened[next(iter(self._opened))]
            cipher = self._opened.get(key_id) or AESGCM(found[0][1])
        blob = binascii.a2b_base64(sealed.get("c", ""))  # base64.b64decode without its Python wrapper (a rebuild opens every event)
        try:
            return cipher.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], str(subject).encode())
        except InvalidTag:
            return None  # not sealed for this aggregate: it reads as erased

    def forget_opened(self) -> None:
        """Drop every opened key: the next open reads the key store again (and finds destroyed keys gone)."""
        self._opened = {}

    def rotate(self, subject: UUID) -> None:
        """A new current key for the subject."""
        with self._lock:
            self._save_unsaved()  # the new key must be newer than any made before
            self._add(str(subject), *_new_key())

    def shred(self, subject: UUID) -> int:
        """Destroy every key of the subject but the current one."""
        with self._lock:
            self._save_unsaved()
            gone = self._destroy_all_but_current(str(subject))
        for key_id in gone:
            self._opened.pop(key_id, None)
        return len(gone)

    def compact(self) -> None:
        """Leave no destroyed key's bytes in the key store's files (nothing to do in memory)."""
        return None

    def close(self) -> None:
        """Release the key store's connection."""
        return None


class MemoryKeys(AesGcmKeys):
    """Keys in a dict (the in-memory store)."""

    def __init__(self) -> None:
        super().__init__()
        self._keys: dict[str, tuple[str, bytes]] = {}  # key id -> (subject, key), in insertion order

    def _current(self, subject: str) -> tuple[str, bytes] | None:
        found = [(kid, key) for kid, (subj, key) in self._keys.items() if subj == subject]
        return found[-1] if found else None

    def _find(self, key_id: str) -> list[tuple[str, bytes]]:
        entry = self._keys.get(key_id)
        return [(key_id, entry[1])] if entry else []

    def _add(self, subject: str, key_id: str, key: bytes) -> None:
        self._keys[key_id] = (subject, key)

    def _destroy_all_but_current(self, subject: str) -> list[str]:
        ids = [kid for kid, (subj, _) in self._keys.items() if subj == subject][:-1]
        for kid in ids:
            del self._keys[kid]
        return ids


def owner_only(path: Path) -> None:
    """``path`` (made if missing) and its SQLite companions readable by their owner alone.

    Made before SQLite opens the file: SQLite gives the write-ahead log and the
    shared-memory file the database file's mode.
    """
    with contextlib.suppress(OSError):  # a file system without modes
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        for suffix in ("", "-wal", "-shm", "-journal"):
            part = Path(f"{path}{suffix}")
            if part.exists() and part.stat().st_mode & 0o077:
                part.chmod(0o600)


def overwrite_and_remove(path: Path) -> None:
    """Zeros over every byte of ``path``, synced, then the file removed (nothing of it left to read)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    with open(path, "r+b") as handle:
        handle.write(bytes(size))
        handle.flush()
        os.fsync(handle.fileno())
    path.unlink()


class _KeyTable(AesGcmKeys):
    """What the key table answers alike on both backends (``MARK``: the driver's placeholder)."""

    MARK = "?"
    _conn: Any

    @abstractmethod
    def _db(self) -> Any:
        """The connection to the key table (opened, and the table made, on first use)."""

    def _current(self, subject: str) -> tuple[str, bytes] | None:
        row = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE subject = {self.MARK} ORDER BY seq DESC LIMIT 1", (subject,)
        ).fetchone()
        return (str(row[0]), bytes(row[1])) if row else None

    def _find(self, key_id: str) -> list[tuple[str, bytes]]:
        mark = self.MARK
        rows = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE seq >= (SELECT seq FROM {KEY_TABLE} WHERE key_id = {mark}) ORDER BY seq LIMIT {mark}",
            (key_id, 1 + READ_AHEAD),
        ).fetchall()
        return [(str(r[0]), bytes(r[1])) for r in rows]

    def _add(self, subject: str, key_id: str, key: bytes) -> None:
        mark = self.MARK
        self._db().execute(f"INSERT INTO {KEY_TABLE} (key_id, subject, key) VALUES ({mark}, {mark}, {mark})", (key_id, subject, key))

    def close(self) -> None:
        """Release the key table's connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class SqliteKeys(_KeyTable):
    """Keys in a table of a SQLite file (the store's ``events.sqlite``); opened on first use.

    The event recorder writes new keys on its own connection, in the events'
    transaction (``write``); this connection reads keys and destroys them.
    """

    _INSERT = f"INSERT OR IGNORE INTO {KEY_TABLE} (subject, key_id, key) VALUES (?, ?, ?)"

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            owner_only(self.path)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA secure_delete = ON")  # a deleted key's bytes are overwritten with zeros
            conn.execute("PRAGMA journal_mode = WAL")  # as the event store's (the same file, for the log)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {KEY_TABLE} "
                "(seq INTEGER PRIMARY KEY AUTOINCREMENT, key_id TEXT UNIQUE NOT NULL, subject TEXT NOT NULL, key BLOB NOT NULL)"
            )
            conn.execute(f"CREATE INDEX IF NOT EXISTS {KEY_TABLE}_subject ON {KEY_TABLE} (subject, seq)")
            self._conn = conn
        return self._conn

    def ensure_table(self) -> None:
        """The key table exists, in an owner-only file (made on first use)."""
        self._db()

    def write(self, cursor: sqlite3.Cursor, keys: list[KeyRow]) -> None:
        """Insert ``keys`` on another connection's cursor (the events' transaction); a key already stored is left as it is."""
        cursor.executemany(self._INSERT, keys)

    def adopt(self, old: Path) -> int:
        """Move the keys of an older store's key file (``data-keys.sqlite``) into this table, then overwrite and remove that file.

        One transaction, in the order the keys were made (which one is current
        stays the same); a key already here (a move cut short) is kept once.
        Then every byte of the old file and its journals is overwritten with
        zeros and the files are removed. The number of keys moved.
        """
        if not old.exists():
            return 0
        source = sqlite3.connect(old, timeout=30)
        try:
            tables = {str(r[0]) for r in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            rows = (
                source.execute(f"SELECT subject, key_id, key FROM {KEY_TABLE} ORDER BY seq").fetchall() if KEY_TABLE in tables else []
            )
        finally:
            source.close()
        self._add_all([(str(s), str(k), bytes(b)) for s, k, b in rows])
        for suffix in ("-wal", "-shm", "-journal", ""):
            overwrite_and_remove(Path(f"{old}{suffix}"))
        return len(rows)

    def _add_all(self, keys: list[KeyRow]) -> None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(self._INSERT, keys)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _destroy_all_but_current(self, subject: str) -> list[str]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            rows = db.execute(
                f"SELECT key_id FROM {KEY_TABLE} WHERE subject = ? ORDER BY seq DESC", (subject,)
            ).fetchall()
            ids = [str(r[0]) for r in rows[1:]]
            db.executemany(f"DELETE FROM {KEY_TABLE} WHERE key_id = ?", [(i,) for i in ids])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return ids

    def compact(self) -> None:
        """Leave no destroyed key in the file's write-ahead log (its pages in the file were zeroed as they were deleted)."""
        if self.path.exists():
            checkpoint_fully(self._db(), self.path)



class PostgresKeys(_KeyTable):
    """Keys in a table of the store's PostgreSQL database; connected on first use."""

    MARK = "%s"

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._conn: Any = None

    def _db(self) -> Any:
        if self._conn is None or self._conn.closed:
            import psycopg

            conn = psycopg.connect(self.url, autocommit=True)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {KEY_TABLE} "
                "(seq bigserial PRIMARY KEY, key_id text UNIQUE NOT NULL, subject text NOT NULL, key bytea NOT NULL)"
            )
            conn.execute(f"CREATE INDEX IF NOT EXISTS {KEY_TABLE}_subject ON {KEY_TABLE} (subject, seq)")
            self._conn = conn
        return self._conn

    _ADD_ALL = (
        f"INSERT INTO {KEY_TABLE} (subject, key_id, key) SELECT * FROM unnest(%s::text[], %s::text[], %s::bytea[]) "
        "ON CONFLICT (key_id) DO NOTHING"
    )

    def ensure_table(self) -> None:
        """The key table exists (made on first use)."""
        self._db()

    def _add_all(self, keys: list[tuple[str, str, bytes]]) -> None:
        subjects, ids, blobs = ([row[n] for row in keys] for n in range(3))
        with self._db().transaction():
            self._db().execute(self._ADD_ALL, (subjects, ids, blobs))

    def _destroy_all_but_current(self, subject: str) -> list[str]:
        with self._db().transaction():
            rows = self._db().execute(
                f"SELECT key_id FROM {KEY_TABLE} WHERE subject = %s ORDER BY seq DESC FOR UPDATE", (subject,)
            ).fetchall()
            ids = [str(r[0]) for r in rows[1:]]
            for key_id in ids:
                self._db().execute(f"DELETE FROM {KEY_TABLE} WHERE key_id = %s", (key_id,))
        return ids

    def compact(self) -> None:
        """Rewrite the key table so destroyed keys leave no dead rows behind."""
        self._db().execute(f"VACUUM FULL {KEY_TABLE}")



def checkpoint_fully(conn: sqlite3.Connection, path: Path) -> None:
    """Copy ``path``'s write-ahead log into the file and truncate it, waiting for readers that hold it.

    ``wal_checkpoint(TRUNCATE)`` does not raise when another connection's read keeps it
    from finishing: it reports ``busy`` and leaves older frames (a destroyed key's page
    among them) in the log. Retried until it finishes; past ``CHECKPOINT_WAIT`` it is
    SQLite's own "database is locked", which the CLI reports as a busy store.
    """
    deadline = time.monotonic() + CHECKPOINT_WAIT
    while True:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
        if time.monotonic() > deadline:
            raise sqlite3.OperationalError(f"database is locked: another process kept {path.name}'s write-ahead log from being emptied; run the erase again")
        time.sleep(0.05)
