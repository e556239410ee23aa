"""The kinds of memory item, and the scope key of the user's global memory.

Plain names, without pydantic: the read path (the SessionStart hook, the MCP
server's handshake) needs them before any model is loaded. ``domain.plan``
re-exports both.
"""

from __future__ import annotations

from enum import StrEnum


class ItemKindName(StrEnum):
    """The kinds of memory item."""

    PREFERENCE = "preference"
    KNOWLEDGE = "knowledge"
    FAILURE = "failure"
    TASK = "task"
    SKILL = "skill"


GLOBAL_SCOPE = "global"
