"""The data the Markdown folder is rendered from, read out of the projection tables.

The renderer is a pure function of this model, so an incrementally maintained
store and a rebuilt one render byte-identical folders.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from mnemolog.domain.holes import has_hole, without_holes
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher


@dataclass(frozen=True)
class FolderSession:
    """A session with a current extraction (one rollout summary file, one raw memory)."""

    session_id: str  # the aggregate id (UUID string)
    native_id: str  # the agent's own thread/session id (Codex: UUIDv7)
    source: str  # "codex" | "claude-code"
    path: str  # where the session file was read (rollout_path)
    cwd: str
    scope: str
    git_branch: str | None
    started_at: datetime | None
    updated_at: datetime
    rollout_summary: str
    rollout_slug: str | None
    raw_memory: str


class ItemSource(Protocol):
    """Where a render reads its items: once for the folder's layout, then again by id where their texts are written."""

    def each(self) -> Iterator[ItemRow]:
        """Every item, in any order."""

    def by_ids(self, ids: Sequence[str]) -> list[ItemRow]:
        """The items with these ids (as strings), in that order (ids ``each`` gave)."""


class HeldItems:
    """Items held in memory as an ItemSource."""

    def __init__(self, items: Sequence[ItemRow]) -> None:
        self.items = items
        self._by_id: dict[str, ItemRow] | None = None

    def each(self) -> Iterator[ItemRow]:
        return iter(self.items)

    def by_ids(self, ids: Sequence[str]) -> list[ItemRow]:
        if self._by_id is None:
            self._by_id = {str(item.item_id): item for item in self.items}
        return [self._by_id[i] for i in ids]


class _Unwithheld:
    """An ItemSource less the items a tombstone withholds from the folder's reader."""

    def __init__(self, source: ItemSource, matcher: TombstoneMatcher, reader: str | None) -> None:
        self.source, self.matcher, self.reader = source, matcher, reader

    def each(self) -> Iterator[ItemRow]:
        return (item for item in self.source.each() if not self.matcher.withholds(item, self.reader))

    def by_ids(self, ids: Sequence[str]) -> list[ItemRow]:
        return self.source.by_ids(ids)


@dataclass(frozen=True)
class FolderModel:
    """Everything one render needs. ``project`` limits it to one scope plus global.

    A store's folder reads its items from ``source`` as it renders (``items``
    then stays empty), so a render never holds every item at once.
    """

    items: tuple[ItemRow, ...]  # active items
    sessions: tuple[FolderSession, ...]
    user_profile: str = ""
    project: str | None = None
    scope_labels: dict[str, str] = field(default_factory=dict)  # scope key -> readable name
    source: ItemSource | None = None  # the active items, read on demand (instead of ``items``)

    def item_source(self) -> ItemSource:
        """Where the render reads the items."""
        return self.source if self.source is not None else HeldItems(self.items)


def without_forgotten(model: FolderModel, matcher: TombstoneMatcher) -> FolderModel:
    """Drop items and cut session and profile text withheld from the folder's reader (render-time enforcement).

    The reader is the folder's project; a folder of every project (``project``
    None) is read in each of them, so every tombstone applies to it. A line
    the cut left a hole in is left out whole (``domain.holes``): an agent
    would read the placeholder as memory.
    """
    reader = model.project
    items = tuple(i for i in model.items if not matcher.withholds(i, reader))
    source = _Unwithheld(model.source, matcher, reader) if model.source is not None else None

    def slug(text: str | None) -> str | None:
        cut = matcher.scrub(text, reader)[0] if text else text
        return None if has_hole(cut) else cut

    sessions = tuple(
        replace(
            s,
            rollout_summary=without_holes(matcher.scrub(s.rollout_summary, reader)[0]),
            raw_memory=without_holes(matcher.scrub(s.raw_memory, reader)[0]),
            rollout_slug=slug(s.rollout_slug),
        )
        for s in model.sessions
    )
    profile = matcher.scrub(model.user_profile, EVERY_PROJECT)[0]  # the profile is read in every project
    return replace(model, items=items, sessions=sessions, user_profile=profile, source=source)
