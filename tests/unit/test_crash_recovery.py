"""Claims, leases and staging folders a crash cannot strand."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.adapters.folder_writer import _owner, write_folder
from mnemolog.adapters.processes import owner_alive, worker_name
from mnemolog.adapters.store import Store
from mnemolog.domain.consolidation import LeaseHeld, PhaseTwoLease
from mnemolog.domain.session import ClaimRefused
from support.scenarios import facts


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    return int(done.stdout)


HOST = socket.gethostname()


def test_a_holder_is_alive_unless_it_is_certainly_gone() -> None:
    assert owner_alive(worker_name())  # this process
    assert not owner_alive(f"{HOST}:{_dead_pid()}:1:0")  # exited
    assert owner_alive("another-host:1:1:0")  # another machine: its lease decides
    me = worker_name().split(":")
    assert not owner_alive(f"{HOST}:{os.getpid()}:1:{int(me[3]) + 1}")  # the pid belongs to a later process now
    assert owner_alive("not a worker name")


def test_a_dead_workers_claim_is_taken_over_at_once() -> None:
    from mnemolog.domain.session import Session

    session = Session(facts=facts("t1"), transcript=())
    now = session.facts.updated_at
    assert now is not None
    dead = f"{HOST}:{_dead_pid()}:1:0"
    session.claim_extraction(dead, now, timedelta(minutes=15), 3)
    with pytest.raises(ClaimRefused, match="claimed by"):
        session.claim_extraction("w2", now, timedelta(minutes=15), 3)  # a live holder keeps it
    session.claim_extraction("w2", now, timedelta(minutes=15), 3, alive=owner_alive)
    assert session.claim is not None and session.claim[0] == "w2"


def test_a_dead_runs_lease_is_taken_over_at_once(memory_store: Store) -> None:
    lease = PhaseTwoLease()
    now = memory_store.clock()
    lease.take(UUID(int=1), f"{HOST}:{_dead_pid()}:1:0", now, timedelta(minutes=30))
    with pytest.raises(LeaseHeld):
        lease.take(UUID(int=2), "w2", now, timedelta(minutes=30))
    with pytest.raises(LeaseHeld):
        lease.take(UUID(int=2), "w2", now, timedelta(minutes=30), alive=lambda worker: True)  # presumed alive
    lease.take(UUID(int=2), "w2", now, timedelta(minutes=30), alive=owner_alive)
    assert lease.holder is not None and lease.holder[0] == UUID(int=2)


def test_a_dead_writers_staging_folder_is_cleaned_and_its_notes_given_back(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"a.md": "a\n"}, out)
    host = _owner().rsplit("-", 1)[0]
    dead = _dead_pid()
    staging = tmp_path / f".memories.new-{host}-{dead}-abc123"
    (staging / "extensions").mkdir(parents=True)
    (staging / "extensions" / "note.md").write_text("mine\n")
    aside = tmp_path / f".memories.old-{host}-{dead}-def456"
    aside.mkdir()
    live = tmp_path / f".memories.new-{host}-{os.getpid()}-live01"  # a writer still at work: left alone
    live.mkdir()

    write_folder({"b.md": "b\n"}, out)

    assert (out / "extensions" / "note.md").read_text() == "mine\n" and (out / "b.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "memories"]


def test_a_folder_set_aside_by_a_dead_writer_comes_back(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    aside = tmp_path / f".memories.old-{_owner().rsplit('-', 1)[0]}-{_dead_pid()}-def456"
    aside.mkdir()
    (aside / "old.md").write_text("old\n")
    write_folder({"new.md": "new\n"}, out)
    assert sorted(p.name for p in out.iterdir()) == ["new.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]
