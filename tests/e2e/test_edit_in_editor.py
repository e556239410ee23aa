"""`mnemolog edit ID` with no text: the item opens in $VISUAL / $EDITOR, as git opens a commit message (issue 30, acceptance 4).

The editors here are small scripts the test writes: one rewrites the text, one saves the buffer as it was,
one empties it, one fails. Each is run on a private copy of a store built from the shared fixtures.
"""

from __future__ import annotations

import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import MNEMOLOG, run_cli
from support.shared_fixtures import shared_fixture

CODEMIE = "git:github.com/codemie-ai/codemie-code"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store after `run --all` over the shared Codex and Claude Code sessions."""
    root = tmp_path_factory.mktemp("fixture-store")
    sessions = root / "sessions"
    for name in ("codex-rollouts", "claude-code"):
        shutil.copytree(shared_fixture(name), sessions / name)
    home = root / "home"
    done = run_cli("run", "--all", str(sessions), env={"MNEMOLOG_HOME": str(home)})
    assert done.code == 0, done.err
    return home


@pytest.fixture
def env(built: Path, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    shutil.copytree(built, home)
    return {"MNEMOLOG_HOME": str(home), "VISUAL": "", "EDITOR": ""}


def editor(tmp_path: Path, body: str) -> str:
    """A Python script acting as the editor: ``body`` runs with ``path`` (the buffer's file) and ``text`` (what it holds)."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import os, pathlib, stat, sys\n"
        "path = pathlib.Path(sys.argv[1])\n"
        "text = path.read_text()\n"
        f"pathlib.Path({str(tmp_path / 'seen.txt')!r}).write_text(text)\n"
        f"pathlib.Path({str(tmp_path / 'seen-mode.txt')!r}).write_text(oct(stat.S_IMODE(os.stat(path).st_mode)))\n"
        f"pathlib.Path({str(tmp_path / 'seen-path.txt')!r}).write_text(str(path))\n"
        + body
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return f"{sys.executable} {script}"


def events(env: dict[str, str]) -> int:
    count: int = run_cli("doctor", "--json", env=env).json()["events"]
    return count


def folder_text(env: dict[str, str]) -> str:
    folder = Path(env["MNEMOLOG_HOME"]) / "memories"
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.md")))


def an_item(env: dict[str, str]) -> dict[str, Any]:
    listed = run_cli("list", "items", "--project", CODEMIE, "--kind", "knowledge", "--json", env=env)
    assert listed.code == 0, listed.err
    item: dict[str, Any] = listed.json()["items"][0]
    return item


def edited_actions(env: dict[str, str], item_id: str) -> list[str]:
    story = run_cli("explain", item_id, "--project", CODEMIE, "--json", env=env).json()
    return [h["action"] for h in story["history"]]


def test_an_editor_that_changes_the_text_records_one_edit_and_the_folder_follows(env: dict[str, str], tmp_path: Path) -> None:
    target = an_item(env)
    script = editor(tmp_path, "path.write_text(text.replace(text.split('\\n\\n', 1)[1], 'Run `npm run build:fast` before pushing.\\n'))\n")
    before = events(env)

    done = run_cli("edit", target["id"][:8], "--project", CODEMIE, "--by", "dana", env={**env, "EDITOR": script})

    assert done.code == 0, done.err
    assert f"item {target['id']} edited" in done.out
    seen = (tmp_path / "seen.txt").read_text()
    assert seen == f"{target['title']}\n\n{target['text']}\n"  # the title, a blank line, the text
    assert (tmp_path / "seen-mode.txt").read_text() == "0o600"  # owner-only
    assert not Path((tmp_path / "seen-path.txt").read_text()).exists()  # removed after
    assert events(env) == before + 1
    assert edited_actions(env, target["id"]) == ["added", "edited"]
    assert "npm run build:fast" in folder_text(env)
    shown = run_cli("show", target["id"], "--project", CODEMIE, "--json", env=env).json()
    assert shown["text"] == "Run `npm run build:fast` before pushing." and shown["title"] == target["title"]


def test_visual_comes_before_editor_and_the_first_line_retitles(env: dict[str, str], tmp_path: Path) -> None:
    target = an_item(env)
    script = editor(tmp_path, "path.write_text('A new title\\n\\n' + text.split('\\n\\n', 1)[1])\n")
    done = run_cli("edit", target["id"], "--project", CODEMIE, "--json", env={**env, "VISUAL": script, "EDITOR": "false"})
    assert done.code == 0, done.err
    assert done.json()["changed"] and done.json()["title"] == "A new title" and done.json()["text"] == target["text"]


def test_an_unchanged_or_emptied_buffer_records_nothing(env: dict[str, str], tmp_path: Path) -> None:
    target = an_item(env)
    before = events(env)

    unchanged = run_cli("edit", target["id"], "--project", CODEMIE, env={**env, "EDITOR": editor(tmp_path, "")})
    assert unchanged.code == 0, unchanged.err
    assert f"item {target['id']}: unchanged, nothing recorded" in unchanged.out

    emptied = run_cli("edit", target["id"], "--project", CODEMIE, env={**env, "EDITOR": editor(tmp_path, "path.write_text('  \\n')\n")})
    assert emptied.code == 0, emptied.err
    assert "the buffer is empty, nothing recorded" in emptied.out

    assert events(env) == before
    assert edited_actions(env, target["id"]) == ["added"]


def test_an_editor_that_fails_records_nothing_and_says_so_in_one_line(env: dict[str, str], tmp_path: Path) -> None:
    target = an_item(env)
    before = events(env)
    script = editor(tmp_path, "path.write_text('half-written')\nsys.exit(3)\n")

    failed = run_cli("edit", target["id"], "--project", CODEMIE, env={**env, "EDITOR": script})

    assert failed.code == 1
    assert failed.err.strip().count("\n") == 0 and "exited with status 3: nothing recorded" in failed.err
    assert not Path((tmp_path / "seen-path.txt").read_text()).exists()
    assert events(env) == before
    assert "half-written" not in folder_text(env)


def test_no_editor_set_is_a_usage_error(env: dict[str, str]) -> None:
    target = an_item(env)
    done = run_cli("edit", target["id"], "--project", CODEMIE, env=env)
    assert done.code == 2 and "set $VISUAL or $EDITOR" in done.err


def test_an_item_changed_while_the_editor_was_open_is_not_overwritten(env: dict[str, str], tmp_path: Path) -> None:
    target = an_item(env)
    # The editor's own process edits the item meanwhile (the store is not held open while the editor runs).
    script = editor(
        tmp_path,
        "import subprocess\n"
        f"done = subprocess.run([{MNEMOLOG!r}, 'edit', {target['id']!r}, 'Someone else wrote this.', '--project', {CODEMIE!r}])\n"
        "assert done.returncode == 0\n"
        "path.write_text(text + ' and mine')\n",
    )
    done = run_cli("edit", target["id"], "--project", CODEMIE, env={**env, "EDITOR": script})
    assert done.code == 1 and "changed while it was being edited: nothing recorded" in done.err
    assert edited_actions(env, target["id"]) == ["added", "edited"]
    assert run_cli("show", target["id"], "--project", CODEMIE, "--json", env=env).json()["text"] == "Someone else wrote this."
