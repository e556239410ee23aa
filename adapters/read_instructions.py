"""The read-path instructions a context starts with: the full prompt, or the SessionStart hook's short one per agent."""

from __future__ import annotations

from mnemolog.domain.project_names import project_label
from mnemolog.prompts import load_prompt, render

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
