"""After `forget VALUE`, nothing re-learns it with a hole: the offline models, as `run` drives them."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.sessions import thread_id, write_rollout

VALUE = "make test-fast"
DIRECTIVE = f"Always run {VALUE} before you commit in this repo."


def items_text(home: Path) -> list[str]:
    store = open_store(Settings(home=home))
    try:
        store.catch_up()
        return [f"{i.title} {i.text} {' '.join(i.keywords)}" for i in store.reads().active_items()]
    finally:
        store.close()


def test_a_forgotten_value_is_not_relearned_and_leaves_no_placeholder(tmp_path: Path) -> None:
    home, sessions = tmp_path / "home", tmp_path / "sessions"
    env = {"MNEMOLOG_HOME": str(home)}
    write_rollout(sessions, thread_id(1), DIRECTIVE, commands=((VALUE, "12 passed", 0), ("ruff check .", "All checks passed!", 0)),
                  when="2026-10-20T10:00:00.000Z")
    first = run_cli("run", "--all", "--json", str(sessions), env=env)
    assert first.code == 0, first.err
    assert any(VALUE in text for text in items_text(home)), "the offline models should learn the directive first"
    folder = home / "memories"
    assert VALUE in (folder / "MEMORY.md").read_text()

    forgot = run_cli("forget", VALUE, "--json", env=env)
    assert forgot.code == 0, forgot.err
    # The folder followed the forget: no other command was needed.
    for path in folder.rglob("*.md"):
        assert VALUE not in path.read_text(), path

    # A later session repeats the value; a re-run of the whole pipeline learns nothing with a hole.
    write_rollout(sessions, thread_id(2), DIRECTIVE, commands=((VALUE, "12 passed", 0),), when="2026-10-22T10:00:00.000Z")
    again = run_cli("run", "--all", "--json", str(sessions), env=env)
    assert again.code == 0, again.err
    texts = items_text(home)
    assert not [t for t in texts if VALUE in t or "[forgotten]" in t or "test-fast" in t]
    for path in folder.rglob("*.md"):
        body = path.read_text()
        assert VALUE not in body and "[forgotten]" not in body, path
