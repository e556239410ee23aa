"""`mnemolog forget VALUE --erase` as a user runs it: dry run, confirmation, then no byte of the home folder holds the value."""

from __future__ import annotations

import json
from pathlib import Path

from mnemolog.domain.session import session_id_for
from support.cli import run_cli
from support.forgetting import SECRET, home_bytes, started_home
from support.sessions import thread_id


def test_erase_asks_first_then_leaves_the_value_nowhere(tmp_path: Path) -> None:
    started = started_home(tmp_path)
    home, env, item_id = started.home, started.env, started.item_id
    assert run_cli("render", env=env).code == 0
    assert b"falcon" in home_bytes(home)

    assert run_cli("forget", SECRET, "--erase", "--project", "git:github.com/acme/api", env=env).code == 2
    assert run_cli("forget", "--item", item_id, "--erase", env=env).code == 2

    dry = run_cli("forget", SECRET, "--erase", "--dry-run", "--json", env=env)
    assert dry.code == 0, dry.err
    planned = dry.json()
    assert planned["dry_run"] and planned["erased"]["session"] == 1 and planned["erased"]["item"] >= 1
    assert planned["keys_destroyed"] == 0 and b"falcon" in home_bytes(home)  # nothing changed

    refused = run_cli("forget", SECRET, "--erase", env=env, stdin="n\n")
    assert refused.code == 1 and b"falcon" in home_bytes(home)

    counts = home / "token-counts.json"  # the render's counts, keyed by digests of the texts it counted
    before = json.loads(counts.read_text())
    counts.write_text(json.dumps({**before, "digest-from-before": 1}))
    done = run_cli("forget", SECRET, "--erase", env=env, stdin="y\n")
    assert done.code == 0, done.err
    assert "digest-from-before" not in json.loads(counts.read_text())  # purged: only texts counted since are in it
    assert "erased:" in done.out and "old key(s) destroyed" in done.out
    assert "falcon" not in (done.out + done.err).lower()
    assert b"falcon" not in home_bytes(home).lower()

    story = run_cli("explain", item_id, "--project", "git:github.com/acme/api", env=env)
    assert story.code == 0 and "[erased]" in story.out and "falcon" not in story.out.lower()
    audit = run_cli("audit", env=env)
    assert audit.code == 0 and "[erased]" in audit.out and "falcon" not in audit.out.lower()
    # One session id for users: the agent's own; the internal one only in --json.
    assert thread_id(1) in audit.out and str(session_id_for("codex", thread_id(1))) not in audit.out
    assert str(session_id_for("codex", thread_id(1))) in run_cli("audit", "--json", env=env).out
    rebuilt = run_cli("rebuild", env=env)
    assert rebuilt.code == 0, rebuilt.err
    found = run_cli("search", "CSV", "--project", "git:github.com/acme/api", "--json", env=env)
    assert found.code == 0 and found.json()["hits"], "what did not carry the value survives the erase"
    assert b"falcon" not in home_bytes(home).lower()


def test_erase_removes_views_once_set_aside_as_corrupt(tmp_path: Path) -> None:
    """A views file that could not be opened was kept beside the store, with the log's texts of that day in clear."""
    started = started_home(tmp_path)
    home, env = started.home, started.env
    views = home / "views.sqlite"
    data = views.read_bytes()
    views.write_bytes(data[:100] + b"\x00garbage" * 2000 + data[16100:])  # its header and first pages damaged
    opened = run_cli("context", "--project", "git:github.com/acme/api", env=env)
    assert opened.code == 0 and "set aside as views.sqlite.corrupt-" in opened.err
    aside = [p for p in home.iterdir() if p.name.startswith("views.sqlite.corrupt-")]  # with its -wal and -shm
    assert aside and b"falcon" in b"".join(p.read_bytes() for p in aside)

    done = run_cli("forget", SECRET, "--erase", env=env, stdin="y\n")
    assert done.code == 0, done.err
    assert not any(p.name.startswith("views.sqlite.corrupt-") for p in home.iterdir())
    assert b"falcon" not in home_bytes(home).lower()
