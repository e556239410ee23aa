"""review: a person's verdict on an item changes its trust, and what context shows first."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.memory import item, save

API = "git:github.com/acme/api"


def test_accept_reject_and_doubt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        first, second = save(
            store,
            item(API, "Run make lint before pushing.", title="Lint"),
            item(API, "Deploys go through the old Jenkins job.", title="Deploy"),
        )
    finally:
        store.close()
    env = {"MNEMOLOG_HOME": str(home)}

    accepted = run_cli("review", second, "--accept", "--by", "dana", "--project", API, "--json", env=env)
    assert accepted.code == 0, accepted.err
    assert accepted.json() == {"item": second, "trust": "accepted", "changed": True, "folder": None}
    assert run_cli("review", f"[item:{second}]", "--accept", "--project", API, "--json", env=env).json()["changed"] is False
    context = run_cli("context", "--project", API, env=env).out
    assert context.index(second) < context.index(first)  # accepted first

    assert run_cli("review", first, "--reject", "--project", API, env=env).code == 0
    assert first not in run_cli("context", "--project", API, env=env).out
    story = run_cli("explain", second, "--project", API, "--json", env=env)
    assert story.code == 0 and "dana" in story.out

    assert run_cli("review", first, "--project", API, env=env).code == 2
    missing = run_cli("review", "00000000-0000-4000-8000-000000000000", "--doubt", env=env)
    assert missing.code == 5 and "no item 00000000-0000-4000-8000-000000000000" in missing.err
