"""What the read commands say where they used to say nothing, `?` or a blank (issue 30, wording).

An empty `history --valid-at` says so; untitled items are named by their text in `history --session` and
`show`; `show` and `search` give the valid time in words; a mistyped command names the closest one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.memory import item, save

API = "git:github.com/acme/api"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """An untitled item (valid since 2026-10-01) and a titled one that stopped being true on 2026-11-02."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        untitled, ended = item(API, "Run make test-fast before pushing; the full suite is slow."), item(API, "Deploys go through Jenkins.", title="Deploys")
        ended.invalidate(datetime(2026, 11, 2, tzinfo=UTC), "moved to GitHub Actions")
        untitled_id, ended_id = save(store, untitled, ended)
    finally:
        store.close()
    return {"env": {"MNEMOLOG_HOME": str(home)}, "untitled": untitled_id, "ended": ended_id}


def test_history_valid_at_with_nothing_valid_says_so(world: dict) -> None:
    done = run_cli("history", "--valid-at", "2020-01-01", "--project", API, env=world["env"])
    assert done.code == 0, done.err
    assert done.out.strip() == f"no memory was valid at 2020-01-01T00:00:00+00:00 in {API} (or global)"
    some = run_cli("history", "--valid-at", "2026-10-15", "--project", API, env=world["env"])
    assert "Deploys go through Jenkins." in some.out and "no memory" not in some.out


def test_history_session_names_an_untitled_item_by_its_text(world: dict) -> None:
    served = run_cli("context", "--project", API, "--session", "s-1", env=world["env"])
    assert served.code == 0, served.err
    told = run_cli("history", "--session", "s-1", env=world["env"])
    assert told.code == 0, told.err
    line = next(line for line in told.out.splitlines() if world["untitled"] in line)
    assert f"{world['untitled']}  Run make test-fast before pushing; the full suite is slow.: proposed" in line


def test_show_gives_the_valid_time_in_words_and_the_text_of_an_untitled_item(world: dict) -> None:
    shown = run_cli("show", world["untitled"], "--project", API, env=world["env"]).out
    assert "valid     since 2026-10-01\n" in shown
    assert "title     (untitled) Run make test-fast before pushing; the full suite is slow.\n" in shown
    assert "?" not in shown.split("\n\n")[0]
    ended = run_cli("show", world["ended"], "--project", API, env=world["env"]).out
    assert "valid     2026-10-01 to 2026-11-02\n" in ended and "title     Deploys\n" in ended
    hits = run_cli("search", "test-fast", "--project", API, env=world["env"]).out
    assert "valid since 2026-10-01" in hits


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("serach", "error: unknown command 'serach'; did you mean 'search'?"),
        ("expalin", "error: unknown command 'expalin'; did you mean 'explain'?"),
        ("frobnicate", "error: unknown command 'frobnicate'; `mnemolog --help` lists the commands"),
    ],
)
def test_a_mistyped_command_names_the_closest_one(typed: str, said: str) -> None:
    done = run_cli(typed, "words")
    assert done.code == 2
    assert done.err.strip() == said
