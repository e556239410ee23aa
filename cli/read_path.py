"""The read path's wiring, shared by the read commands and the MCP server.

Each function binds a read of ``domain.services.read`` to what an open store
and the adapters give it: the views, the tombstone matcher, the o200k
tokenizer, the read-path prompt, the renderer.
"""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.bootstrap import TOKEN_COUNTS, Store
from mnemolog.adapters.read_instructions import hook_instructions, instructions
from mnemolog.adapters.tokens import CachedTokenizer
from mnemolog.domain.services import injections, read


def tokenizer(store: Store) -> CachedTokenizer:
    """The context's tokenizer: item lines come pre-counted from the views; the head's counts are remembered in the home folder."""
    return CachedTokenizer(Path(store.settings.home) / TOKEN_COUNTS)


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
    return injections.served_context(store, tokenizer(store), text, project, limit, session=session, surface=surface)


def memory_folder(store: Store, project: str) -> dict[str, str]:
    """The memory folder's files as rendered for ``project`` (relative path -> text; never the folder on disk)."""
    # the renderer: not imported for context
    from mnemolog.projections.rendered_folder import folder_files

    return folder_files(store.reads(), store.matcher(), tokenizer(store).count, project)  # a summary counted before: no tokenizer


def context_preview(store: Store, project: str, budget: int | None = None, agent: str | None = None) -> read.Context:
    """What a session in ``project`` would receive now, within ``budget`` tokens (default: the context_tokens setting).

    With ``agent`` (a SessionStart hook), the instructions are the short ones written for that agent.
    Nothing is recorded: the web page shows it to a person, not to an agent.
    """
    text, limit = _head_and_budget(store, project, budget, agent)
    return read.context(store.reads(), store.matcher(), tokenizer(store), text, project, limit)


def _head_and_budget(store: Store, project: str, budget: int | None, agent: str | None) -> tuple[str, int]:
    """The instructions a context starts with and the token budget left for it (the hook's tags aside)."""
    limit = store.settings.context_tokens if budget is None else budget
    if agent is not None:
        limit -= HOOK_MARK_TOKENS  # the hook wraps the text in served-memory tags, within the budget
    return (instructions(project) if agent is None else hook_instructions(project, agent)), limit
