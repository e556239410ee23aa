"""The normalised transcript: what every session reader produces.

Nothing after ingest knows which agent wrote a session. Text fields that come
from a session are marked ``SessionText`` so that a later crypto-shredding step
can find them without a migration of meaning.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from mnemolog.domain.tombstone_matcher import TombstoneMatcher


class SessionTextMarker:
    """Marks a field whose text was derived from a recorded session."""


SessionText = Annotated[str, SessionTextMarker()]


class Frozen(BaseModel):
    """Base for immutable value objects."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ItemKind(StrEnum):
    """What one model-relevant transcript item is."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_OUTPUT = "tool_output"
    # What the harness or mnemolog put before the model: Codex's <environment_context>,
    # memory mnemolog served (hook output, its MCP answers). Kept for the record;
    # never a user message, never shown to phase 1.
    CONTEXT = "context"


class TranscriptItem(Frozen):
    """One model-relevant item, in session order."""

    kind: ItemKind
    text: SessionText
    tool: str | None = None
    call_id: str | None = None
    is_error: bool = False
    exit_code: int | None = None
    timestamp: datetime | None = None
    line: int | None = None  # the line of the session file it was read from (1 = first), for evidence spans


class SessionMeta(Frozen):
    """What is known about a session apart from its items."""

    source: str  # "codex" | "claude-code"
    native_id: str
    path: str
    cwd: str | None = None
    git_branch: str | None = None
    git_remote: str | None = None
    git_commit: str | None = None
    agent_version: str | None = None
    origin: str | None = None  # cli, exec, vscode, sdk-cli, subagent, ...
    interactive: bool = True
    is_subagent: bool = False
    started_at: datetime | None = None
    updated_at: datetime | None = None
    first_user_message: SessionText | None = None
    memory_mode: str | None = None  # what the agent itself recorded (Codex)


class CitationRef(Frozen):
    """A memory citation found inside a recorded session."""

    rollout_ids: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    timestamp: datetime | None = None


class Transcript(Frozen):
    """A parsed session: metadata, items in order, and what was skipped."""

    meta: SessionMeta
    items: tuple[TranscriptItem, ...] = ()
    line_count: int = 0
    skipped: dict[str, int] = Field(default_factory=dict)  # reason -> count
    ignored: dict[str, int] = Field(default_factory=dict)  # known non-conversation line type -> count (no warning)
    used_web_search: bool = False
    used_mcp_tools: tuple[str, ...] = ()
    citations: tuple[CitationRef, ...] = ()
    warnings: tuple[str, ...] = ()  # what the reader left out, each naming the file and line

    @property
    def user_message_count(self) -> int:
        """How many user messages the transcript keeps."""
        return sum(1 for item in self.items if item.kind is ItemKind.USER)


def scrub_transcript(transcript: Transcript, matcher: TombstoneMatcher, scope: str) -> tuple[Transcript, tuple[UUID, ...]]:
    """A transcript with every value withheld from ``scope`` cut out, and the tombstones that matched (ingest, after redaction)."""
    if not matcher.rules:
        return transcript, ()
    hits: set[UUID] = set()
    items = []
    for item in transcript.items:
        clean, ids = matcher.scrub(item.text, scope)
        hits.update(ids)
        items.append(item.model_copy(update={"text": clean}) if ids else item)
    meta = transcript.meta
    for name in ("first_user_message", "cwd", "git_branch", "path"):  # a value in a folder or branch name too
        value = getattr(meta, name)
        if value:
            clean, ids = matcher.scrub(value, scope)
            if ids:
                hits.update(ids)
                meta = meta.model_copy(update={name: clean})
    if not hits:
        return transcript, ()
    return transcript.model_copy(update={"items": tuple(items), "meta": meta}), tuple(sorted(hits, key=str))
