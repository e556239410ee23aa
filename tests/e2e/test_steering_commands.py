"""See and steer memory from the command line, on a store built from the shared fixtures (offline models).

list with filters and --json, short ids, edit, pin, scope, review and cite scoped to the project,
forget's minimum length, dry run and confirmation, prune --dry-run; the folder follows each change.
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.cli import MNEMOLOG, run_cli
from support.shared_fixtures import shared_fixture

CODEMIE = "git:github.com/codemie-ai/codemie-code"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store after `run --all` over the shared Codex and Claude Code sessions (a module's worth of tests reuse a copy)."""
    root = tmp_path_factory.mktemp("fixture-store")
    sessions = root / "sessions"
    for name in ("codex-rollouts", "claude-code"):
        shutil.copytree(shared_fixture(name), sessions / name)
    home = root / "home"
    env = {"MNEMOLOG_HOME": str(home)}
    done = run_cli("run", "--all", str(sessions), env=env)
    assert done.code == 0, done.err
    return {"home": home, "sessions": sessions}


@pytest.fixture
def env(built: dict[str, Any], tmp_path: Path) -> dict[str, str]:
    """A private copy of the built store, with its rendered folder."""
    home = tmp_path / "home"
    shutil.copytree(built["home"], home)
    return {"MNEMOLOG_HOME": str(home)}


def events(env: dict[str, str]) -> int:
    count: int = run_cli("doctor", "--json", env=env).json()["events"]
    return count


def folder_text(env: dict[str, str]) -> str:
    folder = Path(env["MNEMOLOG_HOME"]) / "memories"
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.md")))


def items(env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    listed = run_cli("list", "items", *args, "--json", env=env)
    assert listed.code == 0, listed.err
    found: list[dict[str, Any]] = listed.json()["items"]
    return found


def test_list_items_filters_by_project_trust_kind_status_and_text(env: dict[str, str]) -> None:
    proposed = items(env, "--project", CODEMIE, "--trust", "proposed")
    assert proposed and all(i["scope"] in (CODEMIE, "global") and i["trust"] == "proposed" for i in proposed)
    everything = items(env, "--all")
    assert len(everything) > len(proposed) and {i["scope"] for i in everything} > {CODEMIE}
    knowledge = items(env, "--project", CODEMIE, "--kind", "knowledge")
    assert knowledge and all(i["kind"] == "knowledge" for i in knowledge)
    built = items(env, "--project", CODEMIE, "npm run build")
    assert built and all("npm run build" in i["title"] + i["text"] for i in built)
    assert items(env, "--project", CODEMIE, "--status", "retired") == []

    plain = run_cli("list", "items", "--project", CODEMIE, env=env)
    assert plain.code == 0 and proposed[0]["id"][:8] in plain.out and proposed[0]["id"] not in plain.out  # short ids
    bad = run_cli("list", "items", "--trust", "sure", env=env)
    assert bad.code == 2 and "unknown trust 'sure'" in bad.err
    assert run_cli("list", "things", env=env).code == 2
    for what in ("sessions", "notes", "tombstones", "runs"):
        listed = run_cli("list", what, "--all", "--json", env=env)
        assert listed.code == 0 and what in listed.json(), listed.err
    sessions = run_cli("list", "sessions", "--all", "--status", "extracted", "--json", env=env).json()["sessions"]
    every = run_cli("list", "sessions", "--all", "--json", env=env).json()["sessions"]
    assert len(every) == 9 and sessions == [s for s in every if s["state"] == "extracted"]
    # the Demo session holds only failed Task and Edit calls: no commands, nothing to keep
    assert len(sessions) == 3 and {s["agent"] for s in sessions} == {"codex", "claude-code"}
    runs = run_cli("list", "runs", "--json", env=env).json()["runs"]
    assert [r["status"] for r in runs] == ["completed"]


def test_short_ids_work_everywhere_an_id_is_taken(env: dict[str, str]) -> None:
    listed = items(env, "--project", CODEMIE)
    full = listed[0]["id"]
    short = full[:8]
    shown = run_cli("show", short, "--project", CODEMIE, "--json", env=env)
    assert shown.code == 0 and shown.json()["id"] == full, shown.err
    assert run_cli("explain", short, "--project", CODEMIE, "--json", env=env).json()["item"] == full
    assert run_cli("explain", f"[item:{short}]", "--project", CODEMIE, "--json", env=env).json()["item"] == full
    run = run_cli("list", "runs", "--json", env=env).json()["runs"][0]["id"]
    assert run_cli("audit", run[:6], "--json", env=env).json()["consolidation"] == run

    too_short = run_cli("show", short[:3], "--project", CODEMIE, env=env)
    assert too_short.code == 5 and "at least 4" in too_short.err
    other = run_cli("show", short, "--project", "git:github.com/user/project", env=env)
    assert other.code == 5 and "git:github.com/user/project" in other.err


def test_edit_pin_and_scope_are_events_that_reach_context_and_the_folder_at_once(env: dict[str, str]) -> None:
    target, *_ = items(env, "--project", CODEMIE, "--kind", "knowledge")
    short = target["id"][:8]
    before = events(env)

    edited = run_cli("edit", short, "Run `npm run build:fast` before pushing.", "--project", CODEMIE, "--by", "dana", "--json", env=env)
    assert edited.code == 0, edited.err
    assert edited.json()["changed"] and edited.json()["folder"]
    assert "npm run build:fast" in folder_text(env)
    assert "npm run build:fast" in run_cli("context", "--project", CODEMIE, env=env).out
    assert events(env) == before + 2  # the edit, and the injection log's record of that context

    last = items(env, "--project", CODEMIE)[-1]
    pinned = run_cli("pin", last["id"][:8], "--project", CODEMIE, env=env)
    assert pinned.code == 0 and "now pinned" in pinned.out and "memory folder" in pinned.out
    context = run_cli("context", "--project", CODEMIE, env=env).out
    first_item = next(line for line in context.splitlines() if line.startswith("- [") and "[item:" in line)
    assert last["id"] in first_item and "pinned" in first_item
    assert items(env, "--project", CODEMIE)[0]["id"] == last["id"] and items(env, "--project", CODEMIE)[0]["pinned"]

    moved = run_cli("scope", short, "--user", "--from", CODEMIE, "--json", env=env)
    assert moved.code == 0, moved.err
    assert moved.json()["scope"] == "global" and moved.json()["previous"] == CODEMIE
    elsewhere = run_cli("context", "--project", "git:github.com/user/project", env=env).out
    assert "npm run build:fast" in elsewhere  # user-wide now: every project reads it
    back = run_cli("scope", short, "--project", CODEMIE, "--from", "git:github.com/user/project", env=env)
    assert back.code == 0 and f"from global to {CODEMIE}" in back.out
    assert "npm run build:fast" not in run_cli("context", "--project", "git:github.com/user/project", env=env).out

    story = run_cli("explain", short, "--project", CODEMIE, "--json", env=env).json()
    actions = [h["action"] for h in story["history"]]
    assert actions == ["added", "edited", "scope changed", "scope changed"]
    assert story["history"][1]["before"]["text"] == target["text"] and story["history"][1]["editor"] == "dana"
    assert run_cli("scope", short, env=env).code == 2  # --user or --project


def test_review_and_cite_refuse_another_projects_item_like_show(env: dict[str, str]) -> None:
    theirs = items(env, "--project", CODEMIE, "--kind", "knowledge")[0]["id"]
    mine = "git:github.com/user/project"
    before = events(env)
    refused = run_cli("review", theirs, "--accept", "--project", mine, env=env)
    assert refused.code == 5 and mine in refused.err
    cited = run_cli("cite", "--project", mine, "--json", env=env, stdin=f"Used it [item:{theirs}]")
    assert cited.code == 0 and cited.json()["citations"] == 0 and cited.json()["unknown_items"] == [theirs]
    assert "not recorded" in cited.err
    assert events(env) == before
    ok = run_cli("review", theirs[:8], "--accept", "--project", CODEMIE, env=env)
    assert ok.code == 0 and "now accepted" in ok.out and "memory folder" in ok.out


def test_forget_refuses_short_values_and_its_dry_run_writes_nothing(env: dict[str, str]) -> None:
    value = "npm run build"
    assert value in folder_text(env)
    before = events(env)
    short = run_cli("forget", "a", env=env)
    assert short.code == 2 and "shorter than 3 characters" in short.err and "--force" in short.err

    preview = run_cli("forget", value, "--dry-run", "--json", env=env)
    assert preview.code == 0, preview.err
    data = preview.json()
    assert data["dry_run"] and data["retired"] and data["scrubbed_sessions"]
    assert value not in preview.out
    assert events(env) == before  # nothing written
    text = run_cli("forget", value, "--dry-run", env=env)
    assert "dry run" in text.out and f"retire {len(data['retired'])} item(s)" in text.out and "nothing was written" in text.out
    assert value in folder_text(env)

    done = run_cli("forget", value, "--json", env=env)  # not a terminal: no question
    assert done.code == 0 and sorted(done.json()["retired"]) == sorted(data["retired"])
    assert sorted(done.json()["scrubbed_sessions"]) == sorted(data["scrubbed_sessions"])
    assert value not in folder_text(env)
    forced = run_cli("forget", "ab", "--force", "--json", env=env)
    assert forced.code == 0, forced.err

    # A window of 0 days: every extraction, imported seconds ago, is stale (the window counts from the import).
    pruned = run_cli("prune", "--dry-run", "--days", "0", "--json", env=env)
    assert pruned.code == 0 and pruned.json()["dry_run"] and pruned.json()["pruned"], pruned.out
    count = events(env)
    assert run_cli("prune", "--dry-run", "--days", "0", env=env).code == 0
    assert events(env) == count
    real = run_cli("prune", "--days", "0", "--json", env=env).json()
    assert sorted(real["pruned"]) == sorted(pruned.json()["pruned"]) and sorted(real["retired"]) == sorted(pruned.json()["retired"])


def _on_a_terminal(args: list[str], env: dict[str, str], answer: str) -> tuple[int, str]:
    """Run the installed command with a pseudo-terminal as stdin and stdout; type ``answer`` at its question."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [MNEMOLOG, *args], stdin=child, stdout=child, stderr=child, env={**os.environ, "NO_COLOR": "1", **env}, close_fds=True
    )
    os.close(child)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"[y/N]" in seen:
                os.write(main, answer.encode() + b"\r")
                answered = True
        elif process.poll() is not None:
            break
    code = process.wait(timeout=30)
    os.close(main)
    return code, seen.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_forget_on_a_terminal_asks_first_and_a_no_writes_nothing(env: dict[str, str]) -> None:
    before = events(env)
    code, screen = _on_a_terminal(["forget", "npm run build"], env, "n")
    assert "Forget for good? This will retire" in screen and "session(s)" in screen, screen
    assert code == 1 and "cancelled" in screen
    assert events(env) == before
    code, screen = _on_a_terminal(["forget", "npm run build"], env, "y")
    assert code == 0 and "tombstone" in screen, screen
    assert events(env) > before
    code, screen = _on_a_terminal(["forget", "npm test", "--yes"], env, "n")
    assert code == 0 and "Forget for good?" not in screen, screen


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_note_forget_on_a_terminal_asks_like_forget_and_refuses_short_values(env: dict[str, str]) -> None:
    before = events(env)
    code, screen = _on_a_terminal(["note", "--forget", "npm run build"], env, "n")
    assert "Forget for good? This will retire" in screen and "session(s)" in screen and "  retire " in screen, screen
    assert code == 1 and "cancelled" in screen
    code, screen = _on_a_terminal(["note", "--forget", "ab"], env, "y")
    assert code == 2 and "shorter than 3 characters" in screen and "Forget for good?" not in screen, screen
    assert events(env) == before
    code, screen = _on_a_terminal(["note", "--forget", "npm run build"], env, "y")
    assert code == 0 and "tombstone" in screen, screen
    assert events(env) > before


def test_run_never_retires_memory_silently_and_a_pinned_item_is_kept(env: dict[str, str], built: dict[str, Any]) -> None:
    keep = items(env, "--project", CODEMIE, "--kind", "knowledge")[0]["id"]
    assert run_cli("pin", keep[:8], "--project", CODEMIE, env=env).code == 0
    active = {i["id"] for i in items(env, "--all", "--status", "active")}

    # A window of 0 days: the sessions, imported seconds ago, have left it (the window counts from the import).
    ran = run_cli("run", str(built["sessions"]), env={**env, "MNEMOLOG_RETENTION_DAYS": "0"})

    assert ran.code == 0, ran.err
    left = active - {i["id"] for i in items(env, "--all", "--status", "active")}
    assert left and keep not in left
    assert f"retired {len(left)} item(s)" in ran.out and "0-day retention window" in ran.out
    assert "mnemolog pin ID" in ran.out and "run --all" in ran.out
    assert all(i[:8] in ran.out for i in sorted(left)[:10])
    assert f"code rejected item {keep}: I" in run_cli("audit", env=env).out and "is pinned by the user: kept" in run_cli("audit", env=env).out
    assert keep in folder_text(env)


def test_history_shows_memory_before_and_after_an_edit_and_a_scope_change(env: dict[str, str], tmp_path: Path) -> None:
    from datetime import UTC, datetime

    target = items(env, "--project", CODEMIE, "--kind", "knowledge")[0]
    time.sleep(0.01)
    before = datetime.now(UTC).isoformat()
    time.sleep(0.01)
    assert run_cli("edit", target["id"][:8], "Build with `npm run build:ci` only.", "--project", CODEMIE, env=env).code == 0
    assert run_cli("scope", target["id"][:8], "--user", "--from", CODEMIE, env=env).code == 0

    then = run_cli("history", "--as-of", before, "--out", str(tmp_path / "then"), "--json", env=env)
    now = run_cli("history", "--as-of", datetime.now(UTC).isoformat(), "--out", str(tmp_path / "now"), "--json", env=env)

    assert then.code == 0 and now.code == 0, then.err + now.err
    old = (tmp_path / "then" / "MEMORY.md").read_text()
    new = (tmp_path / "now" / "MEMORY.md").read_text()
    assert "npm run build:ci" not in old and "npm run build:ci" in new
    elsewhere = tmp_path / "elsewhere"
    user_wide = run_cli(
        "history", "--as-of", datetime.now(UTC).isoformat(), "--project", "git:github.com/user/project", "--out", str(elsewhere), env=env
    )
    assert user_wide.code == 0 and "npm run build:ci" in (elsewhere / "MEMORY.md").read_text()  # user-wide: every project has it
