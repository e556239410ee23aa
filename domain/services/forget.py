"""Forgetting: tombstone a value, delete a session, forget an item, lift a tombstone.

A forgotten value is never stored: the tombstone holds a keyed hash of its
normalised words, and every event written here names the tombstone, not the
value. Items and stored texts (sessions, notes, user profiles) that carry the
value are retired or scrubbed as events; the events recorded before the forget
stay as history. Which items and texts a tombstone reaches is the one rule of
``domain.tombstone_matcher.reaches``, judged as a writer judges it: in the
scope of the item or text itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.reads import ItemRow, MemoryReads
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import Session
from mnemolog.domain.tombstone import Tombstone, record_suppression, tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint

DEFAULT_REASON = "forgotten at the user's request"
SESSION_REASON = "deleted at the user's request"
ITEM_REASON = "item forgotten at the user's request"


class NotFound(Exception):
    """The session, item or tombstone named does not exist."""


def _ids(values: Sequence[UUID]) -> list[str]:
    return [str(v) for v in values]


@dataclass(frozen=True)
class ForgetReport:
    """What forgetting a value did (the value itself is never part of it)."""

    tombstone_id: UUID
    scope: str
    retired: tuple[UUID, ...]
    already: bool  # the tombstone was already in force (nothing new was placed)
    scrubbed_sessions: tuple[UUID, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tombstone": str(self.tombstone_id),
            "scope": self.scope,
            "already": self.already,
            "retired": _ids(self.retired),
            "scrubbed_sessions": _ids(self.scrubbed_sessions),
        }


@dataclass(frozen=True)
class SessionForgetReport:
    """What deleting a session did."""

    session_id: UUID
    deleted: bool  # False: it was already deleted
    retired: tuple[UUID, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"session": str(self.session_id), "deleted": self.deleted, "retired": _ids(self.retired)}


@dataclass(frozen=True)
class ItemForgetReport:
    """What forgetting one item did."""

    item_id: UUID
    retired: bool
    tombstone_id: UUID
    also_retired: tuple[UUID, ...]  # other items that carried the same text

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "item": str(self.item_id),
            "retired": self.retired,
            "tombstone": str(self.tombstone_id),
            "also_retired": _ids(self.also_retired),
        }


@dataclass(frozen=True)
class LiftReport:
    """What lifting a tombstone did."""

    tombstone_id: UUID
    lifted: bool  # False: it was already lifted
    restored_sessions: tuple[UUID, ...] = ()
    restored_notes: tuple[UUID, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tombstone": str(self.tombstone_id),
            "lifted": self.lifted,
            "restored_sessions": _ids(self.restored_sessions),
            "restored_notes": _ids(self.restored_notes),
        }


def forget_value(uow: UnitOfWork, value: str, scope: str, reason: str = DEFAULT_REASON) -> ForgetReport:
    """Place (or re-arm) a tombstone for ``value`` in ``scope``; retire and scrub what carries it.

    Retires the active items the tombstone reaches (a project tombstone: that
    project's items; global items stay for the other projects and are withheld
    from this project's reads), then scrubs the session texts, notes and user
    profiles that carry it, each as an event. Raises ValueError for a value
    with no words. A reason that repeats the value is stored with it cut out.
    """
    key = uow.tombstone_key()
    digest, width = fingerprint(key, value)
    tombstone_id = tombstone_id_for(digest, scope)
    matcher = TombstoneMatcher(key, [TombstoneRule(tombstone_id, digest, width, scope)])
    safe_reason = matcher.scrub(reason or DEFAULT_REASON, scope)[0]
    reads = uow.reads()
    # An item carrying the value retires; so does one whose evidence quotes it (its support is cut out).
    carriers = [
        i for i in reads.active_items()
        if matcher.withholds(i, i.scope) or any(matcher.contains(s.quote, i.scope) for s in i.spans)
    ]
    app = uow.app

    def command() -> tuple[bool, tuple[UUID, ...]]:
        tombstone: Tombstone | None = app.find(tombstone_id)
        already = False
        if tombstone is None:
            tombstone = Tombstone(digest=digest, width=width, scope=scope, reason=safe_reason)
        elif not tombstone.replace(safe_reason):
            already = True
        retired: list[MemoryItem] = []
        for current in carriers:
            item: MemoryItem | None = app.find(current.item_id)
            if item is not None and item.retire(f"forgotten (tombstone {tombstone_id})", by=EditedBy.USER, tombstone_id=tombstone_id):
                tombstone.record_suppression("item", str(item.id))
                retired.append(item)
        app.save_all(tombstone, *retired)
        return already, tuple(i.id for i in retired)

    already, retired = app.retrying(command)
    scrubbed = _scrub_texts(app, reads, matcher, tombstone_id)
    return ForgetReport(tombstone_id, scope, retired, already, scrubbed)


def _scrub_texts(app: MnemologApp, reads: MemoryReads, matcher: TombstoneMatcher, tombstone_id: UUID) -> tuple[UUID, ...]:
    """Scrub the sessions, notes and user profiles that carry the value; the sessions scrubbed."""
    carrying = [s.session_id for s in reads.session_texts() if any(matcher.contains(t, s.scope) for t in s.texts)]
    scrubbed = tuple(s for s in carrying if _scrub(app, s, matcher))
    for session_id in scrubbed:
        record_suppression(app, tombstone_id, "extraction", str(session_id))
    for aggregate_id, where in [*((n, "note") for n in reads.note_ids()), *((r, "profile") for r in reads.runs_with_profile())]:
        if _scrub(app, aggregate_id, matcher):
            record_suppression(app, tombstone_id, where, str(aggregate_id))
    return scrubbed


def _scrub(app: MnemologApp, aggregate_id: UUID, matcher: TombstoneMatcher) -> bool:
    """Scrub a session's texts, a note's text or a run's user profile; False when it carried no forgotten value."""

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


def forget_session(uow: UnitOfWork, reference: UUID | str, reason: str = SESSION_REASON) -> SessionForgetReport:
    """Delete a session from memory and retire the items whose only evidence it was.

    ``reference`` is its mnemolog id or its agent's own id (a Codex thread id,
    a Claude Code session id). Raises ``NotFound`` for an unknown session.
    """
    reads = uow.reads()
    session_id = reads.resolve_session(str(reference).strip())
    if session_id is None:
        raise NotFound(f"no session {reference} (give its mnemolog id or its agent's session id)")
    orphans: list[ItemRow] = sole_evidence_items(
        reads.active_items(), frozenset({session_id}), reads.live_session_ids() | reads.live_note_ids()  # a standing note is evidence too
    )
    app = uow.app

    def command() -> SessionForgetReport:
        session: Session | None = app.find(session_id)
        if session is None:
            raise NotFound(f"no session {reference}")
        deleted = session.delete(reason)
        retired: list[MemoryItem] = []
        for current in orphans:
            item: MemoryItem | None = app.find(current.item_id)
            if item is not None and item.retire(f"its only evidence, session {session_id}, was deleted", by=EditedBy.CODE):
                retired.append(item)
        app.save_all(session, *retired)
        return SessionForgetReport(session_id, deleted, tuple(i.id for i in retired))

    report: SessionForgetReport = app.retrying(command)
    return report


def forget_item(uow: UnitOfWork, item_id: UUID, reason: str = ITEM_REASON) -> ItemForgetReport:
    """Retire one item and tombstone its text in its scope, so no model can bring it back.

    Whatever else carries that text in that scope is retired or scrubbed as by
    ``forget_value``. Raises ``NotFound`` for an unknown item, ValueError for
    an item with no words to tombstone.
    """
    app = uow.app
    found = app.find(item_id)
    if not isinstance(found, MemoryItem):
        raise NotFound(f"no item {item_id}")
    result = forget_value(uow, found.text or found.title, found.scope, reason)

    def command() -> bool:
        item: MemoryItem = app.repository.get(item_id)
        if not item.retire(f"forgotten (tombstone {result.tombstone_id})", by=EditedBy.USER, tombstone_id=result.tombstone_id):
            return False
        tombstone: Tombstone = app.repository.get(result.tombstone_id)
        tombstone.record_suppression("item", str(item_id))
        app.save_all(item, tombstone)
        return True

    retired_now: bool = app.retrying(command)
    return ItemForgetReport(
        item_id,
        retired_now or item_id in result.retired,
        result.tombstone_id,
        tuple(i for i in result.retired if i != item_id),
    )


def lift(uow: UnitOfWork, tombstone_id: UUID, reason: str) -> LiftReport:
    """Lift a tombstone (as an event) and restore what it scrubbed; items it retired stay retired. Raises ``NotFound``.

    The session texts and notes it cut are put back as the log last held them
    (a ``Restored`` event each), cut again by the tombstones still in force.
    Text that is not in the log uncut stays as it is: a session first read
    while the tombstone was in force, or an erased one.
    """
    app = uow.app

    def command() -> bool:
        tombstone = app.find(tombstone_id)
        if not isinstance(tombstone, Tombstone):
            raise NotFound(f"no tombstone {tombstone_id}")
        if not tombstone.lift(reason):
            return False
        app.save_all(tombstone)
        return True

    lifted: bool = app.retrying(command)
    subjects = {
        (e.where, e.subject)
        for e in app.events.get(tombstone_id)
        if isinstance(e, Tombstone.Suppressed) and e.where in ("extraction", "note")
    }
    matcher = uow.matcher()  # reads() waits for the lift: the matcher holds the tombstones still in force
    sessions = tuple(UUID(s) for where, s in sorted(subjects) if where == "extraction" and _restore(app, UUID(s), matcher, tombstone_id))
    notes = tuple(UUID(s) for where, s in sorted(subjects) if where == "note" and _restore(app, UUID(s), matcher, tombstone_id))
    return LiftReport(tombstone_id, lifted, sessions, notes)


def _restore(app: MnemologApp, aggregate_id: UUID, matcher: TombstoneMatcher, tombstone_id: UUID) -> bool:
    """Restore one session's or note's texts a lifted tombstone cut; False when nothing came back."""

    def command() -> bool:
        aggregate = app.find(aggregate_id)
        events = list(app.events.get(aggregate_id))
        if isinstance(aggregate, Session):
            done = aggregate.restore(Session.uncut_texts(events), matcher, tombstone_id)
        elif isinstance(aggregate, Note):
            recorded = next((e.text for e in reversed(events) if isinstance(e, (Note.Recorded, Note.Rerecorded))), aggregate.text)
            done = aggregate.restore(recorded, matcher, tombstone_id)
        else:
            return False
        if done:
            app.save_all(aggregate)
        return done

    restored: bool = app.retrying(command)
    return restored
