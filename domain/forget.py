"""Forgetting: tombstone a value, delete a session, retire an item, lift a tombstone.

A forgotten value is never stored: the tombstone holds a keyed hash of its
normalised words, and every event written here names the tombstone, not the
value. Items and session texts that carry the value are retired or scrubbed
as events; the events recorded before the forget stay as history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.session import Session
from mnemolog.domain.tombstone import Tombstone, record_suppression, tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint

DEFAULT_REASON = "forgotten at the user's request"


class NotFound(Exception):
    """The session, item or tombstone named does not exist."""


@dataclass(frozen=True)
class ForgetResult:
    """What forgetting a value did."""

    tombstone_id: UUID
    retired: tuple[UUID, ...]
    already: bool  # the tombstone was already in force (nothing new was placed)
    scrubbed_sessions: tuple[UUID, ...] = ()


@dataclass(frozen=True)
class SessionForgetResult:
    """What deleting a session did."""

    session_id: UUID
    deleted: bool
    retired: tuple[UUID, ...]


@dataclass(frozen=True)
class ItemForgetResult:
    """What forgetting one item did."""

    item_id: UUID
    retired: bool
    tombstone_id: UUID
    also_retired: tuple[UUID, ...]


def _matching(matcher: TombstoneMatcher, items: Iterable[ItemRow]) -> list[ItemRow]:
    # Judged as a store judges it: a project tombstone retires that project's
    # items; global ones stay for other projects and are withheld from its reads.
    return [i for i in items if matcher.withholds(i, i.scope)]


def scrub_session(app: MnemologApp, session_id: UUID, matcher: TombstoneMatcher) -> bool:
    """Cut tombstoned values out of a session's stored texts (as a ``Session.Scrubbed`` event)."""

    def command() -> bool:
        session: Session | None = app.find(session_id)
        if session is None or not session.scrub(matcher):
            return False
        app.save_all(session)
        return True

    done: bool = app.retrying(command)
    return done


def forget_value(
    app: MnemologApp,
    key: bytes,
    value: str,
    scope: str,
    reason: str,
    items: Sequence[ItemRow],
    *,
    sessions: Sequence[UUID] = (),
    notes: Sequence[UUID] = (),
    runs: Sequence[UUID] = (),
) -> ForgetResult:
    """Place (or re-arm) a tombstone for ``value`` in ``scope`` and retire the active items that carry it.

    ``items`` are the active items (``Reads.active_items()``); ``sessions``,
    ``notes`` and ``runs`` (completed consolidations, for their user profile)
    may carry the value in their stored texts: those are scrubbed, as events.
    Raises ValueError for a value with no words. The value is never stored:
    a reason that repeats it is stored with the value cut out.
    """
    digest, width = fingerprint(key, value)
    tombstone_id = tombstone_id_for(digest, scope)
    rule = TombstoneRule(tombstone_id, digest, width, scope)
    matcher = TombstoneMatcher(key, [rule])
    safe_reason = matcher.scrub(reason or DEFAULT_REASON, scope)[0]

    def command() -> ForgetResult:
        tombstone: Tombstone | None = app.find(tombstone_id)
        already = False
        if tombstone is None:
            tombstone = Tombstone(digest=digest, width=width, scope=scope, reason=safe_reason)
        elif not tombstone.replace(safe_reason):
            already = True
        retired: list[MemoryItem] = []
        for current in _matching(matcher, items):
            item: MemoryItem | None = app.find(current.item_id)
            if item is None:
                continue
            if item.retire(f"forgotten (tombstone {tombstone_id})", by=EditedBy.USER, tombstone_id=tombstone_id):
                tombstone.record_suppression("item", str(item.id))
                retired.append(item)
        app.save_all(tombstone, *retired)
        return ForgetResult(tombstone_id, tuple(i.id for i in retired), already)

    result = app.retrying(command)
    scrubbed = tuple(s for s in sessions if scrub_session(app, s, matcher))
    for session_id in scrubbed:
        record_suppression(app, tombstone_id, "extraction", str(session_id))
    for aggregate_id, where in [*((n, "note") for n in notes), *((r, "profile") for r in runs)]:
        if _scrub(app, aggregate_id, matcher):
            record_suppression(app, tombstone_id, where, str(aggregate_id))
    return ForgetResult(result.tombstone_id, result.retired, result.already, scrubbed)


def _scrub(app: MnemologApp, aggregate_id: UUID, matcher: TombstoneMatcher) -> bool:
    """Scrub a note's text or a run's user profile; False when it carried no forgotten value."""

    def command() -> bool:
        aggregate = app.find(aggregate_id)
        if aggregate is None:
            return False
        scrub = getattr(aggregate, "scrub", None) or getattr(aggregate, "scrub_profile", None)
        if scrub is None or not scrub(matcher):
            return False
        app.save_all(aggregate)
        return True

    done: bool = app.retrying(command)
    return done


def forget_session(
    app: MnemologApp,
    session_id: UUID,
    items: Sequence[ItemRow],
    *,
    live_sessions: frozenset[UUID] | None = None,
    reason: str = "deleted at the user's request",
) -> SessionForgetResult:
    """Delete a session from memory and retire the items whose only evidence it was.

    Raises ``NotFound`` for an unknown session.
    """

    def command() -> SessionForgetResult:
        session: Session | None = app.find(session_id)
        if session is None:
            raise NotFound(f"no session {session_id}")
        deleted = session.delete(reason)
        retired: list[MemoryItem] = []
        for current in sole_evidence_items(items, frozenset({session_id}), live_sessions):
            item: MemoryItem | None = app.find(current.item_id)
            if item is not None and item.retire(f"its only evidence, session {session_id}, was deleted", by=EditedBy.CODE):
                retired.append(item)
        app.save_all(session, *retired)
        return SessionForgetResult(session_id, deleted, tuple(i.id for i in retired))

    result: SessionForgetResult = app.retrying(command)
    return result


def forget_item(
    app: MnemologApp,
    key: bytes,
    item_id: UUID,
    items: Sequence[ItemRow] = (),
    *,
    sessions: Sequence[UUID] = (),
    reason: str = "item forgotten at the user's request",
) -> ItemForgetResult:
    """Retire one item and tombstone its text (in its scope), so no model can bring it back.

    Raises ``NotFound`` for an unknown item.
    """
    item: MemoryItem | None = app.find(item_id)
    if item is None or not isinstance(item, MemoryItem):
        raise NotFound(f"no item {item_id}")
    result = forget_value(app, key, item.text or item.title, item.scope, reason, items, sessions=sessions)

    def command() -> bool:
        current: MemoryItem = app.repository.get(item_id)
        if not current.retire(f"forgotten (tombstone {result.tombstone_id})", by=EditedBy.USER, tombstone_id=result.tombstone_id):
            return False
        tombstone: Tombstone = app.repository.get(result.tombstone_id)
        tombstone.record_suppression("item", str(item_id))
        app.save_all(current, tombstone)
        return True

    retired_now = app.retrying(command)
    return ItemForgetResult(
        item_id,
        retired_now or item_id in result.retired,
        result.tombstone_id,
        tuple(i for i in result.retired if i != item_id),
    )


def lift(app: MnemologApp, tombstone_id: UUID, reason: str) -> bool:
    """Lift a tombstone (as an event); False when it was already lifted. Raises ``NotFound``."""

    def command() -> bool:
        tombstone: Tombstone | None = app.find(tombstone_id)
        if tombstone is None or not isinstance(tombstone, Tombstone):
            raise NotFound(f"no tombstone {tombstone_id}")
        if not tombstone.lift(reason):
            return False
        app.save_all(tombstone)
        return True

    lifted: bool = app.retrying(command)
    return lifted


def retire_orphans(app: MnemologApp, items: Sequence[ItemRow], gone: frozenset[UUID], why: str) -> tuple[UUID, ...]:
    """Retire (by code) the items whose evidence is all among the ``gone`` sessions."""
    retired: list[MemoryItem] = []
    for current in sole_evidence_items(items, gone, None):
        item: MemoryItem | None = app.find(current.item_id)
        if item is not None and item.retire(f"all its evidence is gone ({why})", by=EditedBy.CODE):
            retired.append(item)
    if retired:
        app.save_all(*retired)
    return tuple(i.id for i in retired)
