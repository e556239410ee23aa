"""The read path's wiring, shared by the read commands and the MCP server.

Each function binds a read of ``domain.services.read`` to what an open store
and the adapters give it: the views, the tombstone matcher, the o200k
tokenizer, the read-path prompt, the renderer.
"""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.bootstrap import Store
from mnemolog.adapters.tokens import CachedTokenizer, count_tokens
from mnemolog.domain.services import read
from mnemolog.projections.rendered_folder import folder_files
from mnemolog.prompts import load_prompt, render


def instructions(project: str) -> str:
    """The read-path prompt (how to use, search and cite memory) for ``project``."""
    return render(load_prompt("read_path"), project=f"{read.project_label(project)}, scope {project}")


def context_for(store: Store, project: str, budget: int | None = None) -> read.Context:
    """What a session in ``project`` receives at start, within ``budget`` tokens (default: the context_tokens setting)."""
    limit = store.settings.context_tokens if budget is None else budget
    # Item lines come pre-counted from the views; the head's counts are remembered in the home folder.
    tokenizer = CachedTokenizer(Path(store.settings.home) / "token-counts.json")
    return read.context(store.reads(), store.matcher(), tokenizer, instructions(project), project, limit)


def memory_folder(store: Store, project: str) -> dict[str, str]:
    """The memory folder's files as rendered for ``project`` (relative path -> text; never the folder on disk)."""
    return folder_files(store.reads(), store.matcher(), count_tokens, project)
