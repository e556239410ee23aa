"""What an agent is served: the context a session starts with (its instructions, the memory within a budget), and the folder's files for a project.

Each function binds a read of ``domain.services.read`` to what an open store and
the adapters give it: the views, the tombstone matcher, the o200k tokenizer
(``Store.ports.tokenizer``), the read-path prompts, the renderer. The CLI's
``context`` and its SessionStart hook, the MCP server and the web page read
through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemolog.domain.project_names import project_label
from mnemolog.domain.services import injections, read
from mnemolog.prompts import load_prompt, render

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store

# How each agent reaches the tools and cites, for the short instructions of the SessionStart hook.
_HOOK_WORDING = {
    "codex": {
        "search": "call the mnemolog MCP tools (`search_memory`, `read_memory_item`) or run `mnemolog search \"words\"`",
        "cite_extra": ", or an `<oai-mem-citation>` block naming the items' `[item:<id>]` markers",
    },
    "claude-code": {
        "search": "use the MCP tools `mcp__mnemolog__search_memory` and `mcp__mnemolog__read_memory_item`, or run `mnemolog search \"words\"`",
        "cite_extra": "",
    },
}


def instructions(project: str) -> str:
    """The read-path prompt (how to use, search and cite memory) for ``project``."""
    return render(load_prompt("read_path"), project=f"{project_label(project)}, scope {project}")


def hook_instructions(project: str, agent: str) -> str:
    """The short read-path instructions a SessionStart hook gives ``agent`` (codex or claude-code)."""
    wording = _HOOK_WORDING.get(agent, _HOOK_WORDING["claude-code"])
    return render(load_prompt("read_path_hook"), project=f"{project_label(project)}, scope {project}", **wording)


HOOK_MARK_TOKENS = 16  # <mnemolog-memory> ... </mnemolog-memory> and their newlines: 12 o200k tokens


def context_for(
    store: Store,
    project: str,
    budget: int | None = None,
    agent: str | None = None,
    *,
    session: str | None = None,
    surface: str = "context",
) -> read.Context:
    """What a session in ``project`` receives at start (as ``context_preview`` reads it), recorded as served.

    The injection log records it as served to ``session`` through ``surface``.
    """
    text, limit = _head_and_budget(store, project, budget, agent)
    return injections.served_context(store, store.ports.tokenizer, text, project, limit, session=session, surface=surface)


def memory_folder(store: Store, project: str) -> dict[str, str]:
    """The memory folder's files as rendered for ``project`` (relative path -> text; never the folder on disk)."""
    # the renderer: not imported for context
    from mnemolog.projections.rendered_folder import folder_files

    return folder_files(store.reads(), store.matcher(), store.ports.tokenizer.count, project)  # a summary counted before: no tokenizer


def context_preview(store: Store, project: str, budget: int | None = None, agent: str | None = None) -> read.Context:
    """What a session in ``project`` would receive now, within ``budget`` tokens (default: the context_tokens setting).

    With ``agent`` (a SessionStart hook), the instructions are the short ones written for that agent.
    Nothing is recorded: the web page shows it to a person, not to an agent.
    """
    text, limit = _head_and_budget(store, project, budget, agent)
    return read.context(store.reads(), store.matcher(), store.ports.tokenizer, text, project, limit)


def _head_and_budget(store: Store, project: str, budget: int | None, agent: str | None) -> tuple[str, int]:
    """The instructions a context starts with and the token budget left for it (the hook's tags aside)."""
    limit = store.settings.context_tokens if budget is None else budget
    if agent is not None:
        limit -= HOOK_MARK_TOKENS  # the hook wraps the text in served-memory tags, within the budget
    return (instructions(project) if agent is None else hook_instructions(project, agent)), limit
