"""The read commands as a user (and Claude Code's hook runner) runs them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.memory_item import Trust
from support.cli import run_cli
from support.memory import git_project, item, save

DOCS = Path(__file__).resolve().parents[2] / "docs" / "read-path.md"
A_SCOPE = "git:github.com/acme/api"
B_SCOPE = "git:github.com/acme/billing"


@pytest.fixture
def world(tmp_path: Path) -> dict:
    """A store with items in projects A and B and a global one, and A's work tree."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        a_item, b_item, g_item = save(
            store,
            item(A_SCOPE, "Run make test-fast before pushing; the full suite is slow.", title="Fast tests"),
            item(B_SCOPE, "Billing deploys run terraform apply in infra/prod.", title="Billing deploy"),
            item("global", "The user prefers short answers.", kind="preference", trust=Trust.ACCEPTED),
        )
    finally:
        store.close()
    project = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    return {"home": home, "env": {"MNEMOLOG_HOME": str(home)}, "a": a_item, "b": b_item, "g": g_item, "project": project}


def documented_hook_command(event: str) -> str:
    """The command of the documented Claude Code hook for ``event`` (from docs/read-path.md)."""
    for block in re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.DOTALL):
        config = json.loads(block)
        if event in config.get("hooks", {}):
            return str(config["hooks"][event][0]["hooks"][0]["command"])
    raise AssertionError(f"no documented {event} hook in {DOCS}")


def test_the_documented_session_start_hook_prints_the_context_of_the_session_project(world: dict, tmp_path: Path) -> None:
    command = documented_hook_command("SessionStart")
    assert command == "mnemolog context --hook --json --agent claude-code"
    hook_input = {
        "session_id": "5f0c3a52-0000-4000-8000-000000000001",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(world["project"]),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    env = {
        **os.environ,
        **world["env"],
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        ["bash", "-c", command], input=json.dumps(hook_input), capture_output=True, text=True,
        env=env, cwd=tmp_path, timeout=60,  # run elsewhere: the project comes from the hook's cwd
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    payload = json.loads(done.stdout)
    assert payload["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    out = payload["hookSpecificOutput"]["additionalContext"]
    assert out.startswith("<mnemolog-memory>\n# Memory from earlier sessions (mnemolog)")
    assert f"[item:{world['a']}]" in out and f"[item:{world['g']}]" in out
    assert world["b"] not in out and "terraform" not in out
    assert out.index(world["g"]) < out.index(world["a"])  # accepted first
    assert count_tokens(out) <= 3000
    assert "mcp__mnemolog__search_memory" in out and "oai-mem-citation" not in out  # written for Claude Code

    plain = subprocess.run(
        ["bash", "-c", "mnemolog context --hook"], input=json.dumps(hook_input), capture_output=True, text=True,
        env=env, cwd=tmp_path, timeout=60,
    )
    assert plain.stdout.startswith("<mnemolog-memory>\n# Memory from earlier sessions (mnemolog)")
    assert "## When to consult it" in plain.stdout  # no --agent: the full instructions


def pending_notes(home: Path) -> list[tuple[str, str, str]]:
    from mnemolog.projections.view_reads import ViewReads

    store = open_store(Settings(home=home))
    try:
        store.catch_up()
        return [(n.intent, n.scope, n.text) for n in ViewReads(store.view).pending_notes()]
    finally:
        store.close()


def test_context_search_show_from_the_command_line(world: dict) -> None:
    cwd = str(world["project"])
    ctx = run_cli("context", "--cwd", cwd, "--budget", "900", env=world["env"])
    assert ctx.code == 0 and world["a"] in ctx.out and count_tokens(ctx.out) <= 900

    hits = run_cli("search", "tests pushing", "--cwd", cwd, "--json", env=world["env"]).json()
    assert hits["project"] == A_SCOPE
    assert [h["id"] for h in hits["hits"]] == [world["a"]]
    assert {"id", "kind", "trust", "valid_from", "valid_to"} <= hits["hits"][0].keys()
    plain = run_cli("search", 'tests "AND (', "--cwd", cwd, env=world["env"])  # FTS syntax is just words
    assert plain.code == 0 and world["a"] in plain.out and "proposed" in plain.out

    shown = run_cli("show", f"[item:{world['a']}]", "--cwd", cwd, env=world["env"])
    assert shown.code == 0, shown.err
    assert "Run make test-fast" in shown.out and "trust proposed" in shown.out
    other = run_cli("show", world["b"], "--cwd", cwd, env=world["env"])
    assert other.code == 5 and world["b"] in other.err and "terraform" not in other.out + other.err


def test_context_json_lists_the_items_with_rank_reason_and_tokens_as_the_injection_log_records_them(world: dict) -> None:
    cwd = str(world["project"])
    plain = run_cli("context", "--cwd", cwd, "--budget", "900", env=world["env"]).out
    done = run_cli("context", "--cwd", cwd, "--budget", "900", "--session", "s-json", "--json", env=world["env"])
    assert done.code == 0, done.err
    data = done.json()
    assert data["project"] == A_SCOPE and data["budget"] == 900 and data["more"] == 0
    assert data["text"] == plain and data["tokens"] == count_tokens(plain) <= 900
    listed = data["items"]
    assert {i["id"] for i in listed} == {world["a"], world["g"]}  # this project's and the user's, not billing's
    assert [i["rank"] for i in listed] == [1, 2] and listed[0]["id"] == world["g"]  # accepted before proposed
    assert {"id", "kind", "scope", "trust", "rank", "why", "tokens"} <= listed[0].keys()
    assert listed[0]["trust"] == "accepted" and listed[0]["why"].startswith("accepted; never cited")
    assert all(i["tokens"] > 0 for i in listed) and sum(i["tokens"] for i in listed) < data["tokens"]

    served = run_cli("history", "--session", "s-json", "--json", env=world["env"]).json()["servings"][0]
    assert [(i["item_id"], i["rank"], i["why"]) for i in served["items"]] == [(i["id"], i["rank"], i["why"]) for i in listed]
    assert served["tokens"] == data["tokens"]


def test_cite_note_and_forget_from_the_command_line(world: dict) -> None:
    cwd = str(world["project"])
    reply = f"Used the fast target. [item:{world['a']}]\n"
    cited = run_cli("cite", "--cwd", cwd, "--json", env=world["env"], stdin=reply)
    assert cited.code == 0 and cited.json()["item_ids"] == [world["a"]] and cited.json()["citations"] == 1

    noted = run_cli("note", "Use", "pnpm,", "not", "npm", "--cwd", cwd, env=world["env"])
    assert noted.code == 0 and "remember" in noted.out
    corrected = run_cli("note", "--correct", "--scope", "global", "Python is 3.12 now", env=world["env"])
    assert corrected.code == 0

    forgot = run_cli("note", "--forget", "make test-fast", "--json", env=world["env"])
    assert forgot.code == 0, forgot.err
    assert forgot.json()["retired"] == [world["a"]] and forgot.json()["scope"] == "global"
    assert "make test-fast" not in forgot.out
    assert pending_notes(world["home"]) == [
        ("remember", A_SCOPE, "Use pnpm, not npm"),
        ("correct", "global", "Python is 3.12 now"),
    ]  # the forget left no note


def test_codex_notes_files_are_imported_once(world: dict, tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    notes_dir = folder / "extensions" / "ad_hoc" / "notes"
    notes_dir.mkdir(parents=True)
    (notes_dir / "2026-11-01T10-00-00-pnpm.md").write_text("Remember: this user uses pnpm.\n")
    (notes_dir / "2026-11-01T11-00-00-fix.md").write_text("Correction: the API runs on port 8081, not 8080.\n")
    (notes_dir / "2026-11-01T12-00-00-drop.md").write_text("Forget the staging password hint.\n")
    first = run_cli("note", "--import-files", "--folder", str(folder), "--json", env=world["env"]).json()
    assert len(first["imported"]) == 2
    assert first["skipped"][0]["file"].endswith("drop.md")
    again = run_cli("note", "--import-files", "--folder", str(folder), "--json", env=world["env"]).json()
    assert again["imported"] == [] and len(again["already"]) == 2


def test_reads_by_project_key_from_anywhere(tmp_path: Path) -> None:
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import open_store
    from support.memory import item, save

    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        ours, theirs = save(
            store,
            item("git:github.com/acme/api", "Run make test-fast before pushing.", title="Fast tests"),
            item("git:github.com/acme/web", "Run make test-fast in the web repo too.", title="Web tests"),
        )
    finally:
        store.close()
    env = {"MNEMOLOG_HOME": str(home)}

    found = run_cli("search", "test-fast", "--project", "git:github.com/acme/api", "--json", env=env, cwd=tmp_path)

    assert found.code == 0, found.err
    assert [h["id"] for h in found.json()["hits"]] == [ours]
    assert run_cli("show", theirs, "--project", "git:github.com/acme/api", env=env).code == 5
    bad = run_cli("search", "x", "--project", "acme", env=env)
    assert bad.code == 2 and "not a project scope key" in bad.err
