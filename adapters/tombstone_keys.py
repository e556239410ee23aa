"""The key tombstone hashes are made with, kept outside the log and the views.

Configured (``tombstone_key``), else generated once: into the home folder for
SQLite, or into the PostgreSQL database's own settings table (not the event
log, not a projection), so that every machine sharing the store matches the
same tombstones.
"""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

SETTINGS_TABLE = "mnemolog_settings"  # store-wide settings kept outside the log (PostgreSQL)


def home_key(home: Path) -> bytes:
    """The SQLite store's key in ``home/tombstone.key``, made (owner-only) on first use."""
    path = home / "tombstone.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip().encode()


def shared_key(url: str) -> bytes:
    """The PostgreSQL store's key in its settings table, made on first use by whichever machine comes first."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # IF NOT EXISTS does not guard a CREATE another process runs at the same moment: its table is ours too.
        with contextlib.suppress(psycopg.errors.UniqueViolation):
            conn.execute(f"CREATE TABLE IF NOT EXISTS {SETTINGS_TABLE} (name text PRIMARY KEY, value text NOT NULL)")
        # Two machines generating at once: the first insert wins and both read it back.
        conn.execute(
            f"INSERT INTO {SETTINGS_TABLE} (name, value) VALUES ('tombstone_key', %s) ON CONFLICT (name) DO NOTHING",
            (secrets.token_hex(32),),
        )
        row = conn.execute(f"SELECT value FROM {SETTINGS_TABLE} WHERE name = 'tombstone_key'").fetchone()
    assert row is not None
    return str(row[0]).encode()
