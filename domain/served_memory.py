"""What mnemolog itself put in front of an agent, recognised again when the session is read back.

The SessionStart hook's text is wrapped in ``<mnemolog-memory>`` tags, and the
MCP server is installed under the name ``mnemolog`` (its tools reach a
transcript as ``mcp__mnemolog__<tool>``). Readers turn both into
``ItemKind.CONTEXT`` items holding only a placeholder: memory that mnemolog
served is a record of a read, never new knowledge, so phase 1 never sees it
and no item can be built from it.
"""

from __future__ import annotations

import re

MEMORY_OPEN = "<mnemolog-memory>"
MEMORY_CLOSE = "</mnemolog-memory>"
SERVER_NAME = "mnemolog"
_SERVED_BLOCK = re.compile(re.escape(MEMORY_OPEN) + r".*?(?:" + re.escape(MEMORY_CLOSE) + r"|\Z)", re.DOTALL)


def wrap(text: str) -> str:
    """``text`` marked as memory mnemolog served."""
    return f"{MEMORY_OPEN}\n{text.rstrip()}\n{MEMORY_CLOSE}\n"


def has_served_block(text: str) -> bool:
    """Whether ``text`` carries memory mnemolog served (a hook's output, pasted or injected)."""
    return MEMORY_OPEN in text


def without_served_blocks(text: str) -> tuple[str, int]:
    """``text`` with every served block cut out, and how many characters were cut."""
    cut = 0

    def drop(match: re.Match[str]) -> str:
        nonlocal cut
        cut += len(match.group(0))
        return ""

    return _SERVED_BLOCK.sub(drop, text).strip(), cut


def is_mnemolog_tool(name: str | None, namespace: str | None = None) -> bool:
    """Whether a tool call went to mnemolog's own MCP server (Claude Code and Codex spellings)."""
    if namespace is not None:
        return namespace in (f"mcp__{SERVER_NAME}", SERVER_NAME, f"mcp__{SERVER_NAME}__")
    return bool(name) and str(name).startswith(f"mcp__{SERVER_NAME}__")


def placeholder(what: str, chars: int) -> str:
    """The text kept in place of served memory (how much, never what)."""
    return f"(memory served by mnemolog: {what}, {chars} characters; not new knowledge)"
