"""The injection log: a Claude Code SessionStart hook and MCP reads with a session id, then `history --session`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.memory_item import Trust
from support.cli import run_cli
from support.memory import git_project, item, save

BIN = Path(sys.executable).parent
SESSION = "5f0c3a52-0000-4000-8000-00000000c0de"
A_SCOPE = "git:github.com/acme/api"
B_SCOPE = "git:github.com/acme/billing"


def test_what_a_session_was_served_and_why(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        a, b, g = save(
            store,
            item(A_SCOPE, "Run make test-fast before pushing.", title="Fast tests", keywords=("tests",)),
            item(B_SCOPE, "Billing tests need the Stripe sandbox.", title="Billing tests", keywords=("tests",)),
            item("global", "The user prefers short answers.", kind="preference", trust=Trust.ACCEPTED),
        )
    finally:
        store.close()
    project = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    env = {**os.environ, "MNEMOLOG_HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}

    hook_input = {"session_id": SESSION, "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project),
                  "hook_event_name": "SessionStart", "source": "startup"}
    hooked = subprocess.run(["bash", "-c", "mnemolog context --hook"], input=json.dumps(hook_input), capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=60)
    assert hooked.returncode == 0 and hooked.stderr == "", hooked.stderr
    assert f"[item:{a}]" in hooked.stdout

    async def mcp_session() -> None:
        server = StdioServerParameters(command=str(BIN / "mnemolog"), args=["mcp"], env=env, cwd=str(project))
        async with Client(server) as client:
            found = await client.call_tool("search_memory", {"query": "tests", "session_id": SESSION})
            assert not found.is_error and [h["id"] for h in json.loads(found.content[0].text)["hits"]] == [a]  # type: ignore[union-attr]
            cited = await client.call_tool("cite_memory", {"text": f"Used [item:{a}]", "session_id": SESSION})
            assert not cited.is_error
            anonymous = await client.call_tool("search_memory", {"query": "tests"})  # no session id: logged, not this session's
            assert not anonymous.is_error

    anyio.run(mcp_session)

    told = run_cli("history", "--session", SESSION, "--json", env={"MNEMOLOG_HOME": str(home)})
    assert told.code == 0, told.err
    data: dict[str, Any] = told.json()
    assert [s["surface"] for s in data["servings"]] == ["hook", "mcp:search_memory"]
    hook, search = data["servings"]
    assert hook["project"] == A_SCOPE and search["project"] == A_SCOPE
    assert [i["item_id"] for i in hook["items"]] == [g, a]  # accepted first
    assert [i["rank"] for i in hook["items"]] == [1, 2]
    assert hook["items"][0]["trust"] == "accepted" and hook["items"][0]["why"].startswith("accepted")
    assert "never cited" in hook["items"][1]["why"] and "updated" in hook["items"][1]["why"]
    assert b not in json.dumps(data)
    assert [i["item_id"] for i in search["items"]] == [a] and search["items"][0]["score"] is not None
    assert "matched the query" in search["items"][0]["why"]
    assert hook["tokens"] > 50 and search["tokens"] > 0 and data["tokens"] == hook["tokens"] + search["tokens"]
    assert data["cited"] == [a] and search["items"][0]["cited"] is True

    plain = run_cli("history", "--session", SESSION, env={"MNEMOLOG_HOME": str(home)})
    assert plain.code == 0 and "hook" in plain.out and "Fast tests" in plain.out and "[cited]" in plain.out
    unknown = run_cli("history", "--session", "nobody", env={"MNEMOLOG_HOME": str(home)})
    assert unknown.code == 5

    # Usage ranks tell served from cited: the item was served three times (hook, two searches), cited once.
    shown = run_cli("show", a, "--project", A_SCOPE, "--json", env={"MNEMOLOG_HOME": str(home)}).json()
    assert shown["use_count"] == 1 and shown["served_count"] == 3
