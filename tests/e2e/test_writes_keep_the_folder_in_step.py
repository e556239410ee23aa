"""Guarantee 7, for every write entrypoint: when it returns, the memory folder on disk is what `mnemolog render` writes.

Every CLI write command, every form of the web page and every MCP write tool,
on SQLite and PostgreSQL. Each case starts from a store with memory in it and a
rendered folder; after each step the configured folder (``MEMORY.md``,
``memory_summary.md``, ``raw_memories.md``, ``rollout_summaries/``, ``skills/``)
must equal, file for file and byte for byte, a fresh ``render --out``. A case
marked as changing memory must also leave the folder different from before, so
that a folder nobody re-rendered cannot pass.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.notes import add_note
from support.cli import run_cli
from support.forgetting import API, SECRET, start
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock

MNEMOLOG = str(Path(sys.executable).parent / "mnemolog")
LIFTED = "make test"  # in session 1's text: a tombstone on it scrubs that session, a lift restores it
SKILL_NOTE = "Skill tidy-user: run `ruff format`, then `ruff check --fix`"  # a user-wide skill: Claude Code's folder holds it


@dataclass
class Home:
    """A store with memory and a rendered folder, and the ids a write needs."""

    root: Path
    env: dict[str, str]
    folder: Path
    item: str  # an active item that carries SECRET
    session: str  # the agent's id of the session SECRET came from
    note: str
    tombstone: str
    new_session: Path  # a session file not ingested yet
    work: Path  # the project's working folder (its git remote is API's)

    def cli(self, *args: str, stdin: str | None = None) -> None:
        result = run_cli(*args, env=self.env, cwd=self.work, stdin=stdin)
        assert result.code == 0, (args, result.out, result.err)


def agent_skills(home: Home) -> dict[str, bytes]:
    """What Claude Code's user skill folder holds of mnemolog's (its marked skill folders)."""
    folder = Path(home.env["HOME"]) / ".claude" / "skills"
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and (path.parent / ".mnemolog-skill").is_file()
    } if folder.is_dir() else {}


def wanted_skills(home: Home) -> dict[str, bytes]:
    """The user-wide skills as memory renders them now, as files of the agent's folder (with mnemolog's marker)."""
    from mnemolog.adapters.agent_skills import user_wide_skills

    store = open_store(Settings(home=home.root, database_url=home.env.get("MNEMOLOG_DATABASE_URL")))
    try:
        store.catch_up()
        skills = user_wide_skills(store)
    finally:
        store.close()
    marker = agent_skills(home)
    return {
        **{f"{name}/SKILL.md": text.encode() for name, text in skills.items()},
        **{path: data for path, data in marker.items() if path.endswith("/.mnemolog-skill") and path.split("/")[0] in skills},
    }


def folder_files(folder: Path) -> dict[str, bytes]:
    """Every rendered file under ``folder`` (Codex's own ``extensions/`` is the user's, not rendered)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).parts[0] != "extensions"
    }


@pytest.fixture
def home(database_url: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    from support.memory import git_project

    root = tmp_path / "home"
    store = open_store(Settings(home=root, database_url=database_url), clock=FixedClock())
    try:
        scenario = start(store, tmp_path)
        add_note(store, SKILL_NOTE, "remember", "global", store.ports.redactor)
    finally:
        store.close()
    user = tmp_path / "user"
    (user / ".claude").mkdir(parents=True)
    env = {"MNEMOLOG_HOME": str(root), "HOME": str(user), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": ""}
    if database_url:
        env["MNEMOLOG_DATABASE_URL"] = database_url
    assert run_cli("consolidate", "--all", env=env).code == 0  # the user-wide skill from the note (--all: the sessions are old)
    assert run_cli("install", "claude-code", env=env).code == 0  # Claude Code's user skill folder follows memory
    store = open_store(Settings(home=root, database_url=database_url), clock=FixedClock())
    try:
        item = str(scenario.value_items()[0]) if (scenario := replace(scenario, store=store)).value_items() else ""
        note = add_note(store, "Use pnpm, never npm, in this repository.", "remember", API, store.ports.redactor)
        tombstone = forget_value(store, LIFTED, API).tombstone_id
    finally:
        store.close()
    assert item, "the value is still in memory after the skill's consolidation"
    for name, value in env.items():  # the web page and the MCP server open the store from the environment too
        monkeypatch.setenv(name, value)
    new = tmp_path / "later"
    write_rollout(new, thread_id(9), "Run the linters with just lint before committing; CI rejects unlinted code.", when="2026-10-25T10:00:00.000Z")
    work = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    made = Home(root, env, root / "memories", item, thread_id(1), str(note.note_id), str(tombstone), new, work)
    made.cli("render")
    assert "tidy-user/SKILL.md" in agent_skills(made), "the user-wide skill is in Claude Code's folder to begin with"
    return made


def web(home: Home, path: str, **form: str) -> None:
    """POST a form of the page (its store session opened per request, as `mnemolog serve` does)."""
    from mnemolog.cli.web.app import create_app
    from mnemolog.cli.web.security import Access
    from starlette.testclient import TestClient

    access = Access(loopback=True)
    client = TestClient(create_app(access), base_url="http://127.0.0.1:8377", follow_redirects=False)
    answer = client.post(path, data={**form, "csrf_token": access.csrf})
    assert answer.status_code == 303, answer.text
    shown = client.get(answer.headers["location"]).text
    assert 'class="problem"' not in shown, shown


def mcp(home: Home, tool: str, **arguments: Any) -> None:
    """Call an MCP write tool of a real `mnemolog mcp` over stdio, started in the project's folder."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def call() -> None:
        server = StdioServerParameters(command=MNEMOLOG, args=["mcp"], env={**os.environ, **home.env}, cwd=str(home.work))
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content

    asyncio.run(call())


Step = Callable[[Home], None]

# name: (steps, whether the last step changes what the folder shows)
WRITES: dict[str, tuple[list[Step], bool]] = {
    "cli ingest": ([lambda h: h.cli("ingest", "--all", str(h.new_session))], False),
    "cli extract": ([lambda h: h.cli("ingest", "--all", str(h.new_session)), lambda h: h.cli("extract", "--all")], False),
    "cli consolidate": ([lambda h: h.cli("ingest", "--all", str(h.new_session)), lambda h: h.cli("extract", "--all"), lambda h: h.cli("consolidate", "--all")], False),
    "cli run": ([lambda h: h.cli("run", "--all", str(h.new_session))], True),
    "cli capture": ([lambda h: h.cli("capture", str(h.new_session))], True),
    "cli note": ([lambda h: h.cli("note", "Always", "answer", "in", "English.")], False),
    "cli note --forget": ([lambda h: h.cli("note", "--forget", SECRET)], True),
    "cli note --withdraw": ([lambda h: h.cli("note", "--withdraw", h.note)], False),
    "cli note --import-files": ([lambda h: _notes_file(h), lambda h: h.cli("note", "--import-files")], False),
    "cli forget value": ([lambda h: h.cli("forget", SECRET, "--yes")], True),
    "cli forget --session": ([lambda h: h.cli("forget", "--session", h.session, "--yes")], True),
    "cli forget --item": ([lambda h: h.cli("forget", "--item", h.item, "--yes")], True),
    "cli forget --erase": ([lambda h: h.cli("forget", SECRET, "--erase", "--yes")], True),
    "cli lift": ([lambda h: h.cli("lift", h.tombstone)], False),
    "cli prune": ([lambda h: h.cli("prune", "--days", "0")], True),
    "cli reset": ([lambda h: h.cli("reset", "--yes")], True),
    "cli review": ([lambda h: h.cli("review", h.item, "--reject", "--project", API)], True),
    "cli edit": ([lambda h: h.cli("edit", h.item, "Deploy to staging with make deploy.", "--project", API)], True),
    "cli pin": ([lambda h: h.cli("pin", h.item, "--project", API)], True),
    "cli scope": ([lambda h: h.cli("scope", h.item, "--user", "--from", API)], True),
    "cli forget a skill's step": ([lambda h: h.cli("forget", "ruff format", "--yes")], True),
    "cli cite": ([lambda h: h.cli("cite", "--project", API, stdin=f"I used [item:{h.item}].")], False),
    "web review": ([lambda h: web(h, f"/items/{h.item}/review", verdict="rejected")], True),
    "web edit": ([lambda h: web(h, f"/items/{h.item}/edit", text="Deploy to staging with make deploy.")], True),
    "web pin": ([lambda h: web(h, f"/items/{h.item}/pin", pinned="1")], True),
    "web scope": ([lambda h: web(h, f"/items/{h.item}/scope", scope="global")], True),
    "web forget value": ([lambda h: web(h, "/forget", what="value", target=SECRET, scope="global")], True),
    "web forget session": ([lambda h: web(h, "/forget", what="session", target=h.session)], True),
    "web forget item": ([lambda h: web(h, "/forget", what="item", target=h.item)], True),
    "web lift": ([lambda h: web(h, f"/tombstones/{h.tombstone}/lift")], False),
    "mcp add_memory_note": ([lambda h: mcp(h, "add_memory_note", text="Prefer pnpm over npm.")], False),
    "mcp cite_memory": ([lambda h: mcp(h, "cite_memory", text=f"Used [item:{h.item}]")], False),
}


def _notes_file(home: Home) -> None:
    notes = home.folder / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "pnpm.md").write_text("Use pnpm, not npm, for installs.\n")


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_write_leaves_the_folder_equal_to_a_fresh_render(home: Home, name: str, tmp_path: Path) -> None:
    steps, changes = WRITES[name]
    before = folder_files(home.folder)
    for n, step in enumerate(steps, start=1):
        step(home)
        fresh = tmp_path / f"fresh-{n}"
        home.cli("render", "--out", str(fresh))
        on_disk, rendered = folder_files(home.folder), folder_files(fresh)
        assert sorted(on_disk) == sorted(rendered), f"{name}, step {n}: files differ"
        stale = [path for path in rendered if on_disk[path] != rendered[path]]
        assert not stale, f"{name}, step {n}: stale after the write: {stale}"
        assert agent_skills(home) == wanted_skills(home), f"{name}, step {n}: Claude Code's skill folder is stale"
    if changes:
        assert folder_files(home.folder) != before, f"{name} should have changed what the folder shows"


def test_a_folder_nobody_re_rendered_fails_the_check(home: Home, tmp_path: Path) -> None:
    """The check above can fail: a write through a store that is not a store session leaves the folder stale."""
    from uuid import UUID

    from mnemolog.domain.memory_item import Trust
    from mnemolog.domain.services.review import review

    store = open_store(Settings(home=home.root, database_url=home.env.get("MNEMOLOG_DATABASE_URL")))
    with nullcontext(store):
        review(store, UUID(home.item), Trust.REJECTED, "someone", "")
    store.close()
    fresh = tmp_path / "fresh"
    home.cli("render", "--out", str(fresh))
    assert folder_files(home.folder) != folder_files(fresh)
