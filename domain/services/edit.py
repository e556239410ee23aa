"""A person steers memory: edit an item's text, pin it, move it to another scope. Each is an event.

Only current (active) items are edited. With ``project`` the item must be of
that project or global, as every read for a project sees it (guarantee 3):
another project's item is not found. An edit is redacted (guarantee 5) and
refused when it carries a forgotten value (guarantee 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.ports import Redactor
from mnemolog.domain.services.review import ItemNotFound
from mnemolog.domain.services.unit_of_work import UnitOfWork

__all__ = ["EditRefused", "ItemNotFound", "change_scope", "edit_item", "is_scope_key", "pin_item"]

DEFAULT_EDITOR = "user"
SCOPE_PREFIXES = ("git:", "path:")


class EditRefused(ValueError):
    """The edit may not be made (item not current, empty text, a forgotten value, a bad scope)."""


@dataclass(frozen=True)
class EditReport:
    """What an edit did."""

    item_id: UUID
    changed: bool  # False (and no event): the text and title were already so
    title: str
    text: str
    redactions: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"item": str(self.item_id), "changed": self.changed, "title": self.title, "text": self.text, "redactions": self.redactions}


@dataclass(frozen=True)
class PinReport:
    """Whether the item is pinned now."""

    item_id: UUID
    pinned: bool
    changed: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"item": str(self.item_id), "pinned": self.pinned, "changed": self.changed}


@dataclass(frozen=True)
class ScopeReport:
    """The item's scope before and after."""

    item_id: UUID
    scope: str
    previous: str
    changed: bool

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"item": str(self.item_id), "scope": self.scope, "previous": self.previous, "changed": self.changed}


def is_scope_key(scope: str) -> bool:
    """``global`` or a project scope key (``git:host/owner/repo``, ``path:/dir``)."""
    return scope == GLOBAL_SCOPE or (scope.startswith(SCOPE_PREFIXES) and len(scope) > len("path:") and scope.strip() == scope)


def _current(uow: UnitOfWork, item_id: UUID, project: str | None) -> MemoryItem:
    item = uow.app.find(item_id)
    if not isinstance(item, MemoryItem) or (project is not None and item.scope not in (project, GLOBAL_SCOPE)):
        where = f" in {project} (or global)" if project is not None else ""
        raise ItemNotFound(f"no memory item {item_id}{where}")
    if not item.is_active:
        raise EditRefused(f"item {item_id} is {item.status.value}: only current memory is edited")
    return item


def edit_item(
    uow: UnitOfWork,
    item_id: UUID,
    text: str,
    *,
    title: str | None = None,
    editor: str = DEFAULT_EDITOR,
    reason: str = "",
    project: str | None = None,
    redactor: Redactor | None = None,
) -> EditReport:
    """Replace an item's text (and, when given, its title) as a ``MemoryItem.Edited`` event.

    Secrets are redacted first; a text carrying a value under a tombstone that
    reaches the item's scope is refused. Raises ``ItemNotFound``, ``EditRefused``.
    """
    app = uow.app
    redactions = 0
    new_text = text.strip()
    new_title = title.strip() if title is not None else None
    if redactor is not None:
        new_text, found = redactor.redact(new_text)
        redactions += found
        if new_title is not None:
            new_title, found = redactor.redact(new_title)
            redactions += found
    if not new_text:
        raise EditRefused("an item needs text")
    matcher = uow.matcher()

    def command() -> EditReport:
        item = _current(uow, item_id, project)
        chosen_title = item.title if new_title is None else new_title
        probe = _Probe(chosen_title, new_text, tuple(item.keywords), item.task_group)
        if matcher.withholds(probe, item.scope):
            raise EditRefused("the new text contains a forgotten value (tombstone): not recorded")
        changed = item.edit(new_text, chosen_title, editor, reason)
        if changed:
            app.save_all(item)
        return EditReport(item_id, changed, chosen_title, new_text, redactions)

    report: EditReport = app.retrying(command)
    return report


@dataclass(frozen=True)
class _Probe:
    """An item's text as the tombstone matcher reads it."""

    title: str
    text: str
    keywords: tuple[str, ...]
    task_group: str


def pin_item(
    uow: UnitOfWork,
    item_id: UUID,
    pinned: bool = True,
    *,
    editor: str = DEFAULT_EDITOR,
    reason: str = "",
    project: str | None = None,
) -> PinReport:
    """Pin an item (``MemoryItem.Pinned``: first in context and the folder, no model retires it) or unpin it.

    Raises ``ItemNotFound``, ``EditRefused`` (the item is not current).
    """
    app = uow.app

    def command() -> PinReport:
        item = _current(uow, item_id, project)
        changed = item.pin(editor, pinned, reason)
        if changed:
            app.save_all(item)
        return PinReport(item_id, pinned, changed)

    report: PinReport = app.retrying(command)
    return report


def change_scope(
    uow: UnitOfWork,
    item_id: UUID,
    scope: str,
    *,
    editor: str = DEFAULT_EDITOR,
    reason: str = "",
    project: str | None = None,
) -> ScopeReport:
    """Move an item to ``scope`` (``global``: the user's, read by every project) as ``MemoryItem.ScopeChanged``.

    Raises ``ItemNotFound``, ``EditRefused`` (not current, or not a scope key).
    """
    if not is_scope_key(scope):
        raise EditRefused(f"not a scope: {scope[:80]!r} (expected global, git:host/owner/repo or path:/dir)")
    app = uow.app

    def command() -> ScopeReport:
        item = _current(uow, item_id, project)
        previous = item.scope
        changed = item.change_scope(scope, editor, reason)
        if changed:
            app.save_all(item)
        return ScopeReport(item_id, scope, previous, changed)

    report: ScopeReport = app.retrying(command)
    return report
