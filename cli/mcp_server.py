"""``mnemolog mcp``: the read path as MCP tools over stdio (the official ``mcp`` SDK, 2.x).

The project every tool reads is the client's first ``file://`` root (MCP
roots) when the client offers roots, else the folder the server was started
in (``--cwd`` or the process's working directory). No tool takes a project
argument, so an agent can only read its own project and the user's global
memory.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from mnemolog.cli.mcp_handshake import package_version
from pydantic import Field

if TYPE_CHECKING:  # the read path loads at the first tool call: the handshake waits for the SDK only
    from mnemolog.adapters.store import Store

SERVER_NAME = "mnemolog"
ROOTS_TIMEOUT = 5.0
SEARCH_MAX = 50
# Argument sizes, in characters: an id is a few dozen, a query a few words, a note a paragraph. Past
# them the SDK refuses the call (the schema's maxLength) before any tool runs, so nothing is written.
SESSION_ID_MAX = 256
ITEM_ID_MAX = 64
QUERY_MAX = 1000
PATH_MAX = 256
NOTE_MAX = 10_000
CITATION_MAX = 20_000
SessionId = Annotated[str | None, Field(max_length=SESSION_ID_MAX)]
Kind = Literal["preference", "knowledge", "failure", "task", "skill"]  # domain.plan.ItemKindName (a test keeps them equal)
Intent = Literal["remember", "correct"]
NoteScope = Literal["project", "global"]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)


INSTRUCTIONS = (
    "mnemolog is the user's memory from earlier coding sessions: their preferences and what was "
    "learned in this project. Call get_memory_context at the start of a task, search_memory before "
    "guessing how this project does something, read_memory_item for an item's evidence, and "
    "cite_memory with the ids you used. Memory can be stale: verify it against the repository. "
    "Record what the user asks you to remember or correct with add_memory_note. Pass your session id "
    "(session_id) to the read tools when you know it: what each session was served is recorded."
)


def _root_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path) or None


class ProjectResolver:
    """Finds the reading project for a tool call: MCP roots first, else the start folder."""

    def __init__(self, default_cwd: str) -> None:
        self.default_cwd = default_cwd
        self._scopes: dict[str, str] = {}

    def scope_of(self, folder: str) -> str:
        """The scope key of a folder (cached: it runs git)."""
        if folder not in self._scopes:
            from mnemolog.adapters.scope import scope_for_cwd

            self._scopes[folder] = scope_for_cwd(folder)
        return self._scopes[folder]

    async def project(self, ctx: Context[Any, Any] | None) -> str:
        """The project of this call's client."""
        folder = await self._root(ctx) if ctx is not None else None
        return self.scope_of(folder or self.default_cwd)

    async def _root(self, ctx: Context[Any, Any]) -> str | None:
        try:
            capabilities = ctx.client_capabilities
            if capabilities is None or capabilities.roots is None:
                return None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026 protocol, still what clients send
                with anyio.fail_after(ROOTS_TIMEOUT):
                    result = await ctx.session.list_roots()
        except Exception:  # no back-channel, a client error or a timeout: fall back to the start folder
            return None
        for root in result.roots:
            path = _root_path(str(root.uri))
            if path:
                return path
        return None


def build_server(open_store: Callable[[], Store], default_cwd: str) -> tuple[MCPServer[Any], Callable[[], None]]:
    """The MCP server with its tools, and a function that closes the store it opened."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, version=package_version())
    resolver = ProjectResolver(default_cwd)
    opened: list[Store] = []

    def store() -> Store:
        if not opened:
            opened.append(open_store())
        opened[0].catch_up()  # a long-lived server: each call reads what other processes wrote since the last
        return opened[0]

    def settled(answer: dict[str, Any]) -> dict[str, Any]:
        """A write tool's answer, once the memory folder and skills follow what it wrote (a long-lived store session)."""
        from mnemolog.adapters.folder_writer import FolderWriteError
        from mnemolog.adapters.store_session import settle

        try:
            followed = settle(opened[0])  # the tool called store() already
        except FolderWriteError as error:  # memory itself is fine: say so
            return {**answer, "warning": str(error)}
        problems = followed.problems if followed else ()
        return {**answer, "warning": "; ".join(problems)} if problems else answer

    def folder_file(project: str, path: str) -> str | None:
        from mnemolog.adapters.agent_context import memory_folder
        from mnemolog.domain.services.read import memory_file

        return memory_file(memory_folder(store(), project), path)

    def close() -> None:
        for s in opened:
            s.close()
        opened.clear()

    @server.tool(annotations=READ_ONLY)
    async def get_memory_context(ctx: Context[Any, Any], session_id: SessionId = None) -> str:
        """The memory summary for this project and the user, with how to use it (what a session gets at start).

        session_id: your session's id, if you know it (recorded with what was served)."""
        from mnemolog.adapters.agent_context import context_for

        project = await resolver.project(ctx)
        return context_for(store(), project, session=session_id, surface="mcp:get_memory_context").text

    @server.tool(annotations=READ_ONLY)
    async def search_memory(
        query: Annotated[str, Field(max_length=QUERY_MAX)],
        ctx: Context[Any, Any],
        kind: Kind | None = None,
        only: Literal["items", "history"] | None = None,
        limit: Annotated[int, Field(ge=1, le=SEARCH_MAX)] = 10,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Search this project's memory and its past sessions, by words and by meaning: ask as you would ask a colleague.

        Each hit is an item (type "item": id, kind, trust, validity) or an excerpt of a past session
        (type "excerpt": ref, agent, session, date, path, lines, text). only: "items" or "history".
        kind narrows to items of one kind: preference, knowledge, failure, task, skill. Pass a hit's
        id or ref to read_memory_item. session_id: your session's id, if you know it (recorded with
        what was served).
        """
        from mnemolog.domain.services.injections import served_recall
        from mnemolog.domain.services.recall import recall_hit_dict

        project = await resolver.project(ctx)
        s = store()
        try:
            found = served_recall(
                s, s.recall(), s.ports.tokenizer, query, project, only=only, kind=kind,
                limit=max(1, min(limit, SEARCH_MAX)), session=session_id, surface="mcp:search_memory",
            )
        except ValueError as error:  # an unknown kind
            raise ToolError(str(error)) from error
        return {"project": project, "hits": [recall_hit_dict(h) for h in found.hits]}

    @server.tool(annotations=READ_ONLY)
    async def read_memory_item(
        item_id: Annotated[str, Field(max_length=ITEM_ID_MAX)], ctx: Context[Any, Any], session_id: SessionId = None
    ) -> dict[str, Any]:
        """One memory item with its status, trust, validity, usage and evidence sessions; or, for a
        search hit's history:<session>:<n> ref, that excerpt of a past session with the turns around it.

        session_id: your session's id, if you know it (recorded with what was served)."""
        from mnemolog.domain.services.injections import served_excerpt, served_item

        project = await resolver.project(ctx)
        s = store()
        if item_id.strip().strip("[]").startswith("history:"):
            excerpt = served_excerpt(s, s.recall(), s.ports.tokenizer, item_id, project, session=session_id, surface="mcp:read_memory_item")
            if excerpt is None:
                raise ToolError(f"no history excerpt {item_id} in this project")
            return excerpt
        item = served_item(s, s.ports.tokenizer, item_id, project, session=session_id, surface="mcp:read_memory_item")
        if item is None:
            raise ToolError(f"no memory item {item_id} in this project")
        return item.as_dict()

    @server.tool(annotations=READ_ONLY)
    async def read_memory_file(
        ctx: Context[Any, Any],
        path: Annotated[str, Field(max_length=PATH_MAX)] = "memory_summary.md",
        start_line: int | None = None,
        end_line: int | None = None,
        session_id: SessionId = None,
    ) -> str:
        """A file of this project's memory folder (memory_summary.md, MEMORY.md, raw_memories.md,
        rollout_summaries/<file>.md, skills/<name>/SKILL.md), whole or lines start_line..end_line (numbered, for citations).
        session_id: your session's id, if you know it (recorded with what was served)."""
        from mnemolog.adapters.agent_context import memory_folder
        from mnemolog.domain.services.injections import served_file
        from mnemolog.domain.services.read import folder_index

        project = await resolver.project(ctx)
        s = store()
        files = memory_folder(s, project)
        text = served_file(
            s, s.ports.tokenizer, files, path, project, start_line, end_line, session=session_id, surface="mcp:read_memory_file"
        )
        if text is None:
            raise ToolError(f"no memory file {path!r}; the folder holds: {', '.join(folder_index(files))}")
        return text

    @server.tool(annotations=WRITES)
    async def add_memory_note(
        text: Annotated[str, Field(max_length=NOTE_MAX)], ctx: Context[Any, Any], intent: Intent = "remember", scope: NoteScope = "project"
    ) -> dict[str, Any]:
        """Leave a note for the next consolidation: intent 'remember' or 'correct'; scope 'project' or 'global'
        (the user, everywhere). To forget a value, the user runs `mnemolog forget` (a note would store it)."""
        if intent not in ("remember", "correct"):
            raise ToolError("intent must be 'remember' or 'correct' (forgetting is `mnemolog forget`, run by the user)")
        if scope not in ("project", "global"):
            raise ToolError("scope must be 'project' or 'global'")
        project = await resolver.project(ctx)
        target = project if scope == "project" else "global"
        from mnemolog.domain.services.notes import add_note

        s = store()
        try:
            added = add_note(s, text, intent, target, s.ports.redactor, source="mcp")
        except ValueError as error:  # an empty note
            raise ToolError(str(error)) from error
        return settled(added.as_dict())

    @server.tool(annotations=WRITES)
    async def cite_memory(
        text: Annotated[str, Field(max_length=CITATION_MAX)], ctx: Context[Any, Any], session_id: SessionId = None
    ) -> dict[str, Any]:
        """Record that you used memory: pass your citation (item ids as [item:<id>], or a Codex
        <oai-mem-citation> block). Cited memories rank higher next time. session_id: your session's id, if known."""
        from mnemolog.domain.services import cite

        project = await resolver.project(ctx)
        s = store()

        def read(rel: str) -> str | None:
            found: str | None = folder_file(project, rel)
            return found

        report = cite.record_citation(s, text, "mcp", citing_session=session_id, read_file=read, project=project)
        if not report.citations:
            raise ToolError("no citation found: give item ids as [item:<id>] or a <oai-mem-citation> block")
        return settled(report.as_dict())

    return server, close


def run_stdio(folder: str) -> None:
    """Serve the tools over stdio until the client disconnects (the SDK's own stdio server, no early handshake)."""
    from mnemolog.adapters.store import open_store

    server, close = build_server(open_store, folder)  # open_store reads the configured settings
    try:
        server.run("stdio")
    finally:
        close()
