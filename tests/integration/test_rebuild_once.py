"""`rebuild` replays the log once: not after a catch-up, and not again when the store just rebuilt outdated views."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.events import PydanticMapper
from support.cli import run_cli
from support.memory import item


def _replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every stored event turned back into a domain event (what any replay, a catch-up or a rebuild, does)."""
    counted: list[int] = []
    real = PydanticMapper.to_domain_event

    def counting(self, stored_event):  # type: ignore[no-untyped-def]
        counted.append(1)
        return real(self, stored_event)

    monkeypatch.setattr(PydanticMapper, "to_domain_event", counting)
    return counted


def test_the_rebuild_command_replays_each_event_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("MNEMOLOG_HOME", str(home))
    store = open_store(Settings(home=home))
    store.app.save_all(*[item("global", f"Fact {n}.") for n in range(30)])  # the views are 30 events behind
    store.close()
    replays = _replays(monkeypatch)
    out = run_cli("rebuild", "--json")
    assert out.json() == {"replayed": 30}
    assert sum(replays) == 30  # no catch-up before the rebuild


def test_views_rebuilt_on_open_are_not_rebuilt_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    store.app.save_all(*[item("global", f"Fact {n}.") for n in range(12)])
    store.catch_up()
    store.close()
    with sqlite3.connect(home / "views.sqlite") as views:  # as if built by an older version
        views.execute("UPDATE mnemolog_view_schema SET version = 'older'")
    replays = _replays(monkeypatch)
    store = open_store(Settings(home=home))
    assert store.rebuild() == 12
    assert sum(replays) == 12
    assert store.reads().counts().items == 12
    store.close()
