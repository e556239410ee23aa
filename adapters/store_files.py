"""The embedded store's files: who may open them at once, views that cannot be opened, and compaction after an erase.

The log (``events.sqlite``, with the data keys) is the record; the views
(``views.sqlite``) are projections of it, rebuilt when they cannot be opened.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from mnemolog.adapters.data_keys import checkpoint_fully, overwrite_and_remove, owner_only
from mnemolog.adapters.tokens import count_tokens
from mnemolog.projections.view_store import MemoryView, open_sqlite_view, open_views, rebuild

if TYPE_CHECKING:
    from mnemolog.domain.application import MnemologApp

OPEN_LOCK = ".open.lock"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if missing), released on exit or when the process dies."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def open_sqlite_views(app: MnemologApp, path: Path, embed_texts: Callable[[list[str]], list[str | None]] | None = None) -> MemoryView:
    """The SQLite views; a views file that cannot be opened (corrupt, not a database) is set aside and rebuilt from the log.

    The views are projections: the log alone is the record, so nothing is lost. They hold the
    log's texts opened, so the file is the owner's alone, as the log is.
    """
    owner_only(path)
    try:
        return open_views(app, open_sqlite_view(str(path), count_tokens, embed_texts))
    except Exception as error:
        if not is_corrupt(path):
            raise
        aside = path.with_name(f"{path.name}.{SET_ASIDE}{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        NOTICES.append(f"the views in {path} could not be opened ({error}); set aside as {aside.name} and rebuilt from the log")
        owner_only(path)
        view = open_sqlite_view(str(path), count_tokens, embed_texts)
        rebuild(app, view)
        return view


VIEWS_FILE = "views.sqlite"
SET_ASIDE = "corrupt-"  # a views file that could not be opened is kept as views.sqlite.corrupt-<time>
TOKEN_COUNTS = "token-counts.json"  # the home's cache of token counts (adapters/composition: Ports.tokenizer)

NOTICES: list[str] = []
"""What opening a store had to repair, for the command to tell the user (and clear)."""


def is_corrupt(path: Path) -> bool:
    """Whether SQLite itself finds ``path`` is not a sound database."""
    import sqlite3

    if not path.exists():
        return False
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as conn:
            row = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.OperationalError as error:
        return "locked" not in str(error) and "busy" not in str(error)
    except sqlite3.DatabaseError:
        return True
    return row is None or row[0] != "ok"


def compact_sqlite_files(home: Path) -> None:
    """After an erase: views set aside as corrupt removed, the views vacuumed, every write-ahead log checkpointed and truncated.

    SQLite keeps deleted rows in free pages and recent pages in its write-ahead
    log (the data keys live in ``events.sqlite``; deleted with ``secure_delete``).
    """
    import sqlite3

    # Views once set aside as corrupt hold the log's texts of that day in clear: the log is the record.
    for aside in sorted(home.glob(f"{VIEWS_FILE}.{SET_ASIDE}*")):
        overwrite_and_remove(aside)
    for name, vacuum in ((VIEWS_FILE, True), ("events.sqlite", False)):
        path = home / name
        if not path.exists():
            continue
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        try:
            conn.execute("PRAGMA secure_delete = ON")
            if vacuum:
                conn.execute("VACUUM")
            checkpoint_fully(conn, path)
        finally:
            conn.close()
