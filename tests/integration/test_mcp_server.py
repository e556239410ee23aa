"""`mnemolog mcp` over stdio, driven by a real client from the official MCP SDK."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.memory_item import Trust
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads
from support.memory import git_project, item, save

MNEMOLOG = str(Path(sys.executable).parent / "mnemolog")
A_SCOPE = "git:github.com/acme/api"
B_SCOPE = "git:github.com/acme/billing"
TOOLS = {"get_memory_context", "search_memory", "read_memory_item", "read_memory_file", "add_memory_note", "cite_memory"}


@pytest.fixture
def prepared(tmp_path: Path) -> dict[str, Any]:
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
    api = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    billing = git_project(tmp_path / "work" / "billing", "https://github.com/acme/billing.git")
    return {"home": home, "a": a, "b": b, "g": g, "api": api, "billing": billing}


def params(prepared: dict[str, Any], cwd: Path) -> StdioServerParameters:
    env = {**os.environ, "MNEMOLOG_HOME": str(prepared["home"])}
    return StdioServerParameters(command=MNEMOLOG, args=["mcp"], env=env, cwd=str(cwd))


def data(result: types.CallToolResult) -> Any:
    assert not result.is_error, result.content
    text = result.content[0].text  # type: ignore[union-attr]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def usage_of(home: Path) -> tuple[dict[str, int], list[tuple[str, str]]]:
    store = open_store(Settings(home=home))
    try:
        store.catch_up()
        reads = ViewReads(store.view)
        items = {r["item_id"]: int(r["use_count"]) for r in reads.query(f"SELECT item_id, use_count FROM {table('item_usage')}")}
        notes = [(n.intent, n.scope) for n in reads.pending_notes()]
        return items, notes
    finally:
        store.close()


def test_a_stdio_client_lists_searches_reads_notes_and_cites(prepared: dict[str, Any], tmp_path: Path) -> None:
    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=prepared["api"].as_uri(), name="api")])

    async def session() -> None:
        # Started in project B's folder: the client's root (project A) decides.
        async with Client(params(prepared, prepared["billing"]), list_roots_callback=roots, mode="legacy") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == TOOLS

            found = data(await client.call_tool("search_memory", {"query": "tests"}))
            assert found["project"] == A_SCOPE
            assert [h["id"] for h in found["hits"]] == [prepared["a"]]

            shown = data(await client.call_tool("read_memory_item", {"item_id": prepared["a"]}))
            assert shown["text"] == "Run make test-fast before pushing." and shown["trust"] == "proposed"
            missing = await client.call_tool("read_memory_item", {"item_id": prepared["b"]})
            assert missing.is_error

            summary = data(await client.call_tool("read_memory_file", {}))
            assert summary.startswith("v1") and prepared["a"] in summary and prepared["b"] not in summary
            lines = data(await client.call_tool("read_memory_file", {"path": "MEMORY.md", "start_line": 1, "end_line": 3}))
            assert lines.startswith("1: # Task Group:")

            context = data(await client.call_tool("get_memory_context", {}))
            assert prepared["g"] in context and prepared["b"] not in context

            note = data(await client.call_tool("add_memory_note", {"text": "Use pnpm, not npm.", "intent": "remember"}))
            assert note["scope"] == A_SCOPE
            cited = data(await client.call_tool("cite_memory", {"text": f"Used [item:{prepared['a']}]"}))
            assert cited["item_ids"] == [prepared["a"]]
            nothing = await client.call_tool("cite_memory", {"text": "no ids"})
            assert nothing.is_error

    anyio.run(session)
    items, notes = usage_of(prepared["home"])
    assert items == {prepared["a"]: 1}
    assert notes == [("remember", A_SCOPE)]


def test_without_roots_the_server_reads_the_project_of_its_folder(prepared: dict[str, Any]) -> None:
    async def session() -> None:
        async with Client(params(prepared, prepared["billing"])) as client:  # the SDK's default (modern) mode
            found = data(await client.call_tool("search_memory", {"query": "tests"}))
            assert found["project"] == B_SCOPE
            assert [h["id"] for h in found["hits"]] == [prepared["b"]]
            cited = data(await client.call_tool("cite_memory", {"text": f"[item:{prepared['b']}]"}))
            assert cited["citations"] == 1

    anyio.run(session)
    assert usage_of(prepared["home"])[0] == {prepared["b"]: 1}


def test_tool_schemas_carry_enums_limits_read_only_hints_and_the_server_version(prepared: dict[str, Any]) -> None:
    from importlib.metadata import version

    from mnemolog.domain.plan import ItemKindName

    async def session() -> None:
        async with Client(params(prepared, prepared["api"]), mode="legacy") as client:
            assert client.server_info is not None and client.server_info.version == version("mnemolog") != ""
            tools = {t.name: t for t in (await client.list_tools()).tools}
            search = tools["search_memory"].input_schema["properties"]
            kinds = next(option["enum"] for option in search["kind"]["anyOf"] if "enum" in option)
            assert kinds == [k.value for k in ItemKindName]
            assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 50)
            note = tools["add_memory_note"].input_schema["properties"]
            assert note["intent"]["enum"] == ["remember", "correct"] and note["scope"]["enum"] == ["project", "global"]
            reads = {"get_memory_context", "search_memory", "read_memory_item", "read_memory_file"}
            for name, tool in tools.items():
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (name in reads), name
            too_many = await client.call_tool("search_memory", {"query": "tests", "limit": 500})
            assert too_many.is_error  # the schema's maximum is enforced, not only advertised

    anyio.run(session)


def test_search_memory_finds_a_decision_in_the_history_and_read_memory_item_reads_it(prepared: dict[str, Any], tmp_path: Path) -> None:
    from support.session_pipeline import ingest_files
    from support.sessions import thread_id, write_rollout

    said = "ok, cap the csv export at 5000 rows per file, the reporting db chokes above that"
    store = open_store(Settings(home=prepared["home"]))
    try:
        ingest_files(store, [write_rollout(tmp_path / "sessions", thread_id(7), said, cwd=str(prepared["api"]))])
    finally:
        store.close()

    async def session() -> None:
        async with Client(params(prepared, prepared["api"]), mode="legacy") as client:
            found = data(await client.call_tool("search_memory", {"query": "why does the export come in several files?"}))
            excerpts = [h for h in found["hits"] if h["type"] == "excerpt"]
            assert excerpts and "5000 rows" in excerpts[0]["text"]
            assert excerpts[0]["session"] == thread_id(7) and excerpts[0]["agent"] == "codex"
            history = data(await client.call_tool("search_memory", {"query": "export rows", "only": "history"}))
            assert {h["type"] for h in history["hits"]} == {"excerpt"}
            shown = data(await client.call_tool("read_memory_item", {"item_id": excerpts[0]["ref"]}))
            assert "5000 rows" in shown["excerpt"]["text"] and shown["around"] == []
            elsewhere = await client.call_tool("read_memory_item", {"item_id": f"history:{thread_id(99)}:0"})
            assert elsewhere.is_error

    anyio.run(session)
