"""The tombstone key lives outside the log, and every machine sharing a store uses the same one."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.services import forget as forgetting
from support.raw_events import raw_event_states


def test_two_machines_share_the_key_and_the_tombstones(store_factory, backend: str, tmp_path: Path) -> None:
    here = store_factory()
    if backend == "postgres":
        # another machine: its own home folder, the same database
        there = open_store(Settings(home=tmp_path / "elsewhere", database_url=here.settings.database_url))
    else:
        there = store_factory()  # SQLite: one store is one home folder
    try:
        assert here.tombstone_key() == there.tombstone_key()
        forgetting.forget_value(here, "hunter2 staging password", "global")
        there.catch_up()
        assert there.matcher().contains("the hunter2 staging password is old", "global")
        key = here.tombstone_key()
        assert not any(key in state for state in raw_event_states(here))
    finally:
        if there is not here and backend == "postgres":
            there.close()
