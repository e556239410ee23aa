"""SQLite keeps the data keys in the log's own file, written in the events' transaction; an older store's key file is moved in.

Before, a SQLite store kept its data keys in ``data-keys.sqlite`` beside the
log, committed on their own (two durable commits a command). Opening such a
store moves its keys into ``events.sqlite``, overwrites the old file and
removes it; what was sealed still opens, and ``forget --erase`` still shreds.
"""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

from mnemolog.adapters.data_keys import KEY_FILE, KEY_TABLE
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.domain.services.erase import erase_value
from support.forgetting import SECRET, everything_an_agent_reads, home_bytes, started_home
from support.memory import item
from support.stores import FixedClock

A = "git:example.com/acme/api"


def _open(home: Path) -> Store:
    return open_store(Settings(home=home), clock=FixedClock())


def _keys(home: Path) -> dict[str, bytes]:
    """Key id -> key bytes, as the log's file holds them."""
    with sqlite3.connect(home / "events.sqlite") as conn:
        return {str(k): bytes(b) for k, b in conn.execute(f"SELECT key_id, key FROM {KEY_TABLE}")}


def _as_an_older_store(home: Path) -> dict[str, bytes]:
    """Move the key table out of ``events.sqlite`` into ``data-keys.sqlite``, the layout stores had before; the keys moved."""
    keys = _keys(home)
    with sqlite3.connect(home / "events.sqlite") as conn:
        rows = conn.execute(f"SELECT seq, key_id, subject, key FROM {KEY_TABLE} ORDER BY seq").fetchall()
        conn.execute(f"DROP TABLE {KEY_TABLE}")
    conn = sqlite3.connect(home / "events.sqlite", isolation_level=None)
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    (home / "events.sqlite").chmod(0o644)  # the log's file was not owner-only before
    old = sqlite3.connect(home / KEY_FILE, isolation_level=None)
    old.execute("PRAGMA journal_mode = WAL")
    old.execute(
        f"CREATE TABLE {KEY_TABLE} (seq INTEGER PRIMARY KEY AUTOINCREMENT, key_id TEXT UNIQUE NOT NULL, subject TEXT NOT NULL, key BLOB NOT NULL)"
    )
    old.executemany(f"INSERT INTO {KEY_TABLE} VALUES (?, ?, ?, ?)", rows)
    old.close()
    with sqlite3.connect(home / "events.sqlite") as conn:
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (KEY_TABLE,)).fetchone()
    return keys


def test_a_command_writes_its_keys_in_the_log_file_and_no_key_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = _open(home)
    items = [item(A, f"Run make target-{n} before pushing.") for n in range(20)]
    store.app.save_all(*items)
    store.close()
    assert not (home / KEY_FILE).exists()
    assert len(_keys(home)) == 20
    reopened = _open(home)
    assert [reopened.app.find(it.id).text for it in items] == [it.text for it in items]
    reopened.close()


def test_the_log_file_that_holds_the_keys_and_the_views_that_hold_its_texts_are_owner_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "views.sqlite").touch(0o644)  # made readable by an older version: narrowed on open
    store = _open(home)
    store.app.save_all(item(A, "Use uv to install the tools."))
    store.catch_up()
    for name in ("events.sqlite", "events.sqlite-wal", "events.sqlite-shm", "views.sqlite", "views.sqlite-wal", "views.sqlite-shm"):
        path = home / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    store.close()


def test_an_older_store_opens_with_its_keys_moved_in_and_its_old_key_file_gone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = _open(home)
    kept = item(A, "Pin the tool versions with uv.")
    shredded = item(A, "Deploy with the blue-falcon-42 key.")
    store.app.save_all(kept, shredded)
    before = _keys(home)
    store.keys.rotate(shredded.id)
    assert store.keys.shred(shredded.id) == 1  # an older store already holds destroyed keys
    gone = {k: b for k, b in before.items() if k not in _keys(home)}
    store.close()
    keys = _as_an_older_store(home)
    assert gone and set(keys).isdisjoint(gone)

    again = _open(home)
    assert not [p.name for p in home.iterdir() if p.name.startswith(KEY_FILE)]  # the old file and its journals
    assert _keys(home) == keys  # every key moved, none twice
    with sqlite3.connect(home / "events.sqlite") as conn:
        order = [str(r[0]) for r in conn.execute(f"SELECT key_id FROM {KEY_TABLE} ORDER BY seq")]
    assert order == list(keys)  # in the order they were made: which is current stays the same
    assert stat.S_IMODE((home / "events.sqlite").stat().st_mode) == 0o600
    assert again.app.find(kept.id).text == "Pin the tool versions with uv."
    assert "blue-falcon" not in again.app.find(shredded.id).text
    data = home_bytes(home)
    assert not [k for k, b in gone.items() if b in data]  # a key destroyed before the move is nowhere
    again.app.save_all(item(A, "Run the linters before a commit."))
    again.close()
    third = _open(home)  # opening again moves nothing and loses nothing
    assert _keys(home).keys() >= keys.keys() and third.app.find(kept.id).text == "Pin the tool versions with uv."
    third.close()


def test_after_the_move_erase_still_shreds_and_leaves_no_destroyed_key(tmp_path: Path) -> None:
    home = started_home(tmp_path).home
    _as_an_older_store(home)

    moved = _open(home)
    before = _keys(home)
    report = erase_value(moved, SECRET, moved.keys, moved)
    assert report.keys_destroyed >= 1
    destroyed = {k: b for k, b in before.items() if k not in _keys(home)}
    assert len(destroyed) == report.keys_destroyed
    data = home_bytes(home)
    assert SECRET.encode() not in data
    assert not [k for k, b in destroyed.items() if b in data]  # shredded: the key's bytes are in no file
    assert not [name for name, text in everything_an_agent_reads(moved).items() if SECRET in text]
    moved.close()
    fresh = _open(home)
    fresh.rebuild()
    assert not [name for name, text in everything_an_agent_reads(fresh).items() if SECRET in text]
    fresh.close()
