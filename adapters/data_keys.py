"""The data keys sealed text is encrypted under (crypto-shredding), kept outside the log.

AES-256-GCM from the ``cryptography`` package: a random 96-bit nonce per
seal, the aggregate id as associated data (a sealed text moved onto another
aggregate does not open). Keys are random, one set per aggregate; the newest
is current. Where they live:

- SQLite: a key file beside the store (``data-keys.sqlite`` in the home
  folder), written with ``secure_delete`` so a destroyed key's bytes are
  overwritten, not left in a free page;
- PostgreSQL: the table ``mnemolog_data_keys`` in the same database (not the
  event log, not a projection), vacuumed in full after keys are destroyed;
- in memory, for the in-memory store of tests.

Looking up a subject's current key is never cached: another process may have
rotated it. Opened keys are cached (a key never changes), and dropped from
the cache when this process destroys them. A key not in the cache is read
with the ``READ_AHEAD`` keys made after it: the log is read in the order its
aggregates were made, which is the order their keys were made, so a replay
of the whole log (a rebuild) reads the key table a page at a time instead of
a key per aggregate. The cache holds at most ``CACHED_KEYS`` keys.

Keys ``seal`` makes are held until the event recorders store them, before
the events sealed under them (``batch_recorders``): one statement for a
whole batch, and on PostgreSQL in the events' own transaction (one commit). A new aggregate
(``new``: its first event) has no key yet, so none is looked up.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import sqlite3
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_TABLE = "mnemolog_data_keys"
KEY_FILE = "data-keys.sqlite"
NONCE_BYTES = 12
READ_AHEAD = 500  # keys read with a key that is not cached (made after it)
CACHED_KEYS = 20_000  # opened keys kept (the oldest dropped first)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class AesGcmKeys(ABC):
    """Seal and open with AES-GCM; subclasses keep the keys (the ``DataKeys`` port)."""

    def __init__(self) -> None:
        self._opened: dict[str, AESGCM] = {}  # key id -> the cipher of that key
        self._lock = threading.Lock()
        self._unsaved: dict[str, tuple[str, bytes]] = {}  # subject -> (key id, key) made, not yet stored

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

    def _add_all(self, keys: list[tuple[str, str, bytes]]) -> None:
        """Store new (subject, key id, key) rows, in order, all or none."""
        for row in keys:
            self._add(*row)

    @abstractmethod
    def _destroy_all_but_current(self, subject: str) -> list[str]:
        """Destroy the subject's keys but the newest; their ids."""

    # -- the port

    def seal(self, subject: UUID, plaintext: bytes, new: bool = False) -> dict[str, str]:
        """``plaintext`` under the subject's current key (made on first use; ``new``: no key can exist yet)."""
        name = str(subject)
        with self._lock:
            current = self._unsaved.get(name)
            if current is None and not new:
                current = self._current(name)
            if current is None:
                current = (uuid4().hex, AESGCM.generate_key(bit_length=256))
                self._unsaved[name] = current
        key_id, key = current
        nonce = os.urandom(NONCE_BYTES)
        cipher = AESGCM(key).encrypt(nonce, plaintext, name.encode())
        return {"k": key_id, "c": _b64(nonce + cipher)}

    def save_keys(self) -> None:
        """Store the keys ``seal`` made since the last call, in one transaction, before what is sealed under them."""
        with self._lock:
            self._save_unsaved()

    def unsaved_keys(self) -> list[tuple[str, str, bytes]]:
        """The (subject, key id, key) rows ``seal`` made and nobody stored yet."""
        with self._lock:
            return [(subject, key_id, key) for subject, (key_id, key) in self._unsaved.items()]

    def saved(self, keys: list[tuple[str, str, bytes]]) -> None:
        """``keys`` were committed: they are no longer held here."""
        with self._lock:
            for subject, key_id, _ in keys:
                if self._unsaved.get(subject, ("",))[0] == key_id:
                    del self._unsaved[subject]

    def _save_unsaved(self) -> None:
        if self._unsaved:
            self._add_all([(subject, key_id, key) for subject, (key_id, key) in self._unsaved.items()])
            self._unsaved.clear()

    def open(self, subject: UUID, sealed: dict[str, str]) -> bytes | None:
        """The plaintext, or None when its key was destroyed."""
        key_id = sealed.get("k", "")
        cipher = self._opened.get(key_id)
        if cipher is None:
            with self._lock:
                unsaved = {kid: k for kid, k in self._unsaved.values()}
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

    def rotate(self, subject: UUID) -> None:
        """A new current key for the subject."""
        with self._lock:
            self._save_unsaved()  # the new key must be newer than any made before
            self._add(str(subject), uuid4().hex, AESGCM.generate_key(bit_length=256))

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


class SqliteKeys(AesGcmKeys):
    """Keys in a SQLite file beside the store; opened on first use."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            # Owner-only before SQLite opens it: its write-ahead log is made with the file's mode.
            with contextlib.suppress(OSError):  # a file system without modes
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
                self.path.chmod(0o600)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA secure_delete = ON")  # a deleted key's bytes are overwritten with zeros
            conn.execute("PRAGMA journal_mode = WAL")  # a commit is one sync of the log, as the event store's
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {KEY_TABLE} "
                "(seq INTEGER PRIMARY KEY AUTOINCREMENT, key_id TEXT UNIQUE NOT NULL, subject TEXT NOT NULL, key BLOB NOT NULL)"
            )
            conn.execute(f"CREATE INDEX IF NOT EXISTS {KEY_TABLE}_subject ON {KEY_TABLE} (subject, seq)")
            self._conn = conn
        return self._conn

    def _current(self, subject: str) -> tuple[str, bytes] | None:
        row = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE subject = ? ORDER BY seq DESC LIMIT 1", (subject,)
        ).fetchone()
        return (str(row[0]), bytes(row[1])) if row else None

    def _find(self, key_id: str) -> list[tuple[str, bytes]]:
        rows = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE seq >= (SELECT seq FROM {KEY_TABLE} WHERE key_id = ?) ORDER BY seq LIMIT ?",
            (key_id, 1 + READ_AHEAD),
        ).fetchall()
        return [(str(r[0]), bytes(r[1])) for r in rows]

    def _add(self, subject: str, key_id: str, key: bytes) -> None:
        self._db().execute(f"INSERT INTO {KEY_TABLE} (key_id, subject, key) VALUES (?, ?, ?)", (key_id, subject, key))

    def _add_all(self, keys: list[tuple[str, str, bytes]]) -> None:
        db = self._db()  # its own file: committed before the events are
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(f"INSERT INTO {KEY_TABLE} (subject, key_id, key) VALUES (?, ?, ?)", keys)
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
        """Rewrite the key file without free pages."""
        if self.path.exists():
            self._db().execute("VACUUM")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class PostgresKeys(AesGcmKeys):
    """Keys in a table of the store's PostgreSQL database; connected on first use."""

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

    def _current(self, subject: str) -> tuple[str, bytes] | None:
        row = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE subject = %s ORDER BY seq DESC LIMIT 1", (subject,)
        ).fetchone()
        return (str(row[0]), bytes(row[1])) if row else None

    def _find(self, key_id: str) -> list[tuple[str, bytes]]:
        rows = self._db().execute(
            f"SELECT key_id, key FROM {KEY_TABLE} WHERE seq >= (SELECT seq FROM {KEY_TABLE} WHERE key_id = %s) ORDER BY seq LIMIT %s",
            (key_id, 1 + READ_AHEAD),
        ).fetchall()
        return [(str(r[0]), bytes(r[1])) for r in rows]

    def _add(self, subject: str, key_id: str, key: bytes) -> None:
        self._db().execute(f"INSERT INTO {KEY_TABLE} (key_id, subject, key) VALUES (%s, %s, %s)", (key_id, subject, key))

    _ADD_ALL = f"INSERT INTO {KEY_TABLE} (subject, key_id, key) SELECT * FROM unnest(%s::text[], %s::text[], %s::bytea[])"

    def insert_statement(self) -> str:
        """The INSERT of (subjects, key ids, keys) arrays, for a recorder to run in the events' statement."""
        return self._ADD_ALL

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

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
