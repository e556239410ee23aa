"""MCP arguments have size limits (issue 28, acceptance 4): an argument over its limit is an error naming it, and nothing is written.

A real ``mnemolog mcp`` over stdio and the official SDK's client: a 1 MB
note, a 10 kB query, a 2 kB session id (and the other free-text arguments)
are refused before any tool code runs, so the log gains no event (no note,
no injection record, no citation). The same calls within their limits do
write, so the count can change.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.memory import git_project, item, save

MNEMOLOG = str(Path(sys.executable).parent / "mnemolog")
API = "git:github.com/acme/api"

OVER = [
    ("add_memory_note", {"text": "n" * 1024 * 1024}, "text"),
    ("search_memory", {"query": "q" * 10 * 1024}, "query"),
    ("get_memory_context", {"session_id": "s" * 2 * 1024}, "session_id"),
    ("search_memory", {"query": "tests", "session_id": "s" * 2 * 1024}, "session_id"),
    ("read_memory_item", {"item_id": "i" * 2 * 1024}, "item_id"),
    ("read_memory_file", {"path": "p" * 10 * 1024}, "path"),
    ("cite_memory", {"text": "[item:x] " + "c" * 1024 * 1024}, "text"),
]


def events(home: Path) -> int:
    """How many events the log holds."""
    store = open_store(Settings(home=home))
    try:
        return int(store.app.max_notification_id() or 0)
    finally:
        store.close()


def test_arguments_over_their_limit_are_refused_with_a_clear_error_and_write_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    try:
        (known,) = save(store, item(API, "Run make test-fast before pushing.", title="Fast tests", keywords=("tests",)))
    finally:
        store.close()
    api = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    server = StdioServerParameters(command=MNEMOLOG, args=["mcp"], env={**os.environ, "MNEMOLOG_HOME": str(home)}, cwd=str(api))
    before = events(home)
    refused: list[str] = []

    async def over_the_limit() -> None:
        async with Client(server, mode="legacy") as client:
            schemas = {t.name: t.input_schema["properties"] for t in (await client.list_tools()).tools}
            for tool, _, name in OVER:  # the limits are advertised, so a client can keep to them
                field = schemas[tool][name]
                limits = [field.get("maxLength"), *(option.get("maxLength") for option in field.get("anyOf", ()))]
                assert any(limits), f"{tool}.{name} advertises no maxLength"
            for tool, arguments, name in OVER:
                answer = await client.call_tool(tool, arguments)
                assert answer.is_error, f"{tool} took a {name} of {len(str(arguments[name]))} characters"
                said = answer.content[0].text  # type: ignore[union-attr]
                assert name in said and "at most" in said, said
                assert len(said) < 2000, "the error does not echo the argument"
                refused.append(tool)

    anyio.run(over_the_limit)
    assert len(refused) == len(OVER)
    assert events(home) == before, "a refused call wrote to the log"

    async def within() -> None:
        async with Client(server, mode="legacy") as client:
            assert not (await client.call_tool("get_memory_context", {"session_id": "s" * 200})).is_error
            assert not (await client.call_tool("add_memory_note", {"text": "Use pnpm, not npm. " * 100})).is_error
            assert not (await client.call_tool("cite_memory", {"text": f"Used [item:{known}]"})).is_error

    anyio.run(within)
    assert events(home) > before
