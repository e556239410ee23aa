"""Forgetting: tombstone a value, delete a session, forget an item, lift a tombstone; each planned, then applied.

A forgotten value is never stored: the tombstone holds a keyed hash of its
normalised words, and every event written here names the tombstone, not the
value. Items and stored texts (sessions, notes, user profiles) that carry the
value are retired or scrubbed as events; the events recorded before the forget
stay as history. Which items and texts a tombstone reaches is the one rule of
``domain.tombstone_matcher.reaches``, judged as a writer judges it: in the
scope of the item or text itself.

Each use case is a ``plan_*`` function (one read of the views, nothing
written) and the plan's ``apply`` (see ``services.plans``); ``forget_value``
and the others are the two in one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.services.plans import (
    CARRIES,
    NAMED,
    QUOTES,
    SOLE_EVIDENCE,
    Retirement,
    dry_run_dict,
    ids,
)
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import Session
from mnemolog.domain.tombstone import Tombstone, tombstone_id_for
from mnemolog.domain.tombstone_matcher import (
    EVERY_PROJECT,
    TombstoneMatcher,
    TombstoneRule,
    fingerprint,
)

DEFAULT_REASON = "forgotten at the user's request"
SESSION_REASON = "deleted at the user's request"
ITEM_REASON = "item forgotten at the user's request"


class NotFound(Exception):
    """The session, item or tombstone named does not exist."""


@dataclass(frozen=True)
class ForgetReport:
    """What forgetting a value did (the value itself is never part of it)."""

    tombstone_id: UUID
    scope: str
    retired: tuple[UUID, ...]
    already: bool  # the tombstone was already in force (nothing new was placed)
    scrubbed_sessions: tuple[UUID, ...] = ()
    scrubbed_notes: tuple[UUID, ...] = ()
    scrubbed_profiles: tuple[UUID, ...] = ()  # consolidation runs whose user profile was scrubbed
    written: int = 0  # the last notification id written (what readers wait for)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tombstone": str(self.tombstone_id),
            "scope": self.scope,
            "already": self.already,
            "retired": ids(self.retired),
            "scrubbed_sessions": ids(self.scrubbed_sessions),
            "scrubbed_notes": ids(self.scrubbed_notes),
            "scrubbed_profiles": ids(self.scrubbed_profiles),
        }


@dataclass(frozen=True)
class SessionForgetReport:
    """What deleting a session did."""

    session_id: UUID
    deleted: bool  # False: it was already deleted
    retired: tuple[UUID, ...]
    written: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"session": str(self.session_id), "deleted": self.deleted, "retired": ids(self.retired)}


@dataclass(frozen=True)
class ItemForgetReport:
    """What forgetting one item did."""

    item_id: UUID
    retired: bool
    tombstone_id: UUID
    also_retired: tuple[UUID, ...]  # other items that carried the same text
    text: ForgetReport | None = None  # what forgetting its text did

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "item": str(self.item_id),
            "retired": self.retired,
            "tombstone": str(self.tombstone_id),
            "also_retired": ids(self.also_retired),
            "scrubbed_sessions": ids(self.text.scrubbed_sessions) if self.text else [],
            "scrubbed_notes": ids(self.text.scrubbed_notes) if self.text else [],
        }


@dataclass(frozen=True)
class LiftReport:
    """What lifting a tombstone did."""

    tombstone_id: UUID
    lifted: bool  # False: it was already lifted
    restored_sessions: tuple[UUID, ...] = ()
    restored_notes: tuple[UUID, ...] = ()
    written: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tombstone": str(self.tombstone_id),
            "lifted": self.lifted,
            "restored_sessions": ids(self.restored_sessions),
            "restored_notes": ids(self.restored_notes),
        }


@dataclass(frozen=True)
class ForgetPlan:
    """What forgetting a value (or an item's text) will do: the tombstone, the items to retire, the texts to scrub.

    ``tombstone`` is what happens to it: ``place`` (new), ``re-arm`` (it was
    lifted) or ``in force`` (nothing to place). The rule is a keyed hash of
    the value, never the value.
    """

    action: str  # forget-value | forget-item
    rule: TombstoneRule
    reason: str  # the stored reason, the value cut out of it
    tombstone: str  # place | re-arm | in force
    retired: tuple[Retirement, ...]
    sessions: tuple[UUID, ...]  # sessions whose stored texts are scrubbed
    notes: tuple[UUID, ...]
    profiles: tuple[UUID, ...]  # consolidation runs whose user profile is scrubbed
    item_id: UUID | None = None  # forget-item: the item named

    @property
    def tombstone_id(self) -> UUID:
        """The tombstone placed (or re-armed)."""
        return self.rule.tombstone_id

    @property
    def scope(self) -> str:
        """Where the value is forgotten."""
        return self.rule.scope

    @property
    def already(self) -> bool:
        """The tombstone is in force already."""
        return self.tombstone == "in force"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: ids, kinds and scopes, not item texts (they may carry the value)."""
        shown = dry_run_dict(
            self.action, self.retired, scope=self.scope, tombstone=self.tombstone_id, already=self.already,
            sessions=self.sessions, notes=self.notes, profiles=self.profiles,
        )
        return {**shown, "tombstone_action": self.tombstone, "item": str(self.item_id) if self.item_id else None}

    def apply(self, uow: UnitOfWork) -> ForgetReport:
        """Place (or re-arm) the tombstone, retire the planned items still active, scrub the planned texts.

        Nothing outside the plan is written; what reached the store after the
        plan is withheld at read time by the tombstone all the same.
        """
        app = uow.app
        tombstone_id = self.tombstone_id
        matcher = TombstoneMatcher(uow.tombstone_key(), [self.rule])

        def command() -> tuple[bool, tuple[UUID, ...]]:
            tombstone: Tombstone | None = app.find(tombstone_id)
            already = False
            if tombstone is None:
                tombstone = Tombstone(digest=self.rule.digest, width=self.rule.width, scope=self.scope, reason=self.reason)
            elif not tombstone.replace(self.reason):
                already = True
            retired: list[MemoryItem] = []
            for planned in self.retired:
                item: MemoryItem | None = app.find(planned.item_id)
                if item is not None and item.retire(f"forgotten (tombstone {tombstone_id})", by=EditedBy.USER, tombstone_id=tombstone_id):
                    tombstone.record_suppression("item", str(item.id))
                    retired.append(item)
            app.save_all(tombstone, *retired)
            return already, tuple(i.id for i in retired)

        already, retired = app.retrying(command)
        sessions = tuple(s for s in self.sessions if _scrub(app, s, matcher, tombstone_id, "extraction"))
        notes = tuple(n for n in self.notes if _scrub(app, n, matcher, tombstone_id, "note"))
        profiles = tuple(r for r in self.profiles if _scrub(app, r, matcher, tombstone_id, "profile"))
        return ForgetReport(tombstone_id, self.scope, retired, already, sessions, notes, profiles, app.last_written)


@dataclass(frozen=True)
class ItemForgetPlan:
    """What forgetting one item will do: retire it, and forget its text in its scope (``value``)."""

    value: ForgetPlan
    action: str = "forget-item"

    @property
    def item_id(self) -> UUID:
        """The item named."""
        assert self.value.item_id is not None
        return self.value.item_id

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (that of the value plan)."""
        return self.value.as_dict()

    def apply(self, uow: UnitOfWork) -> ItemForgetReport:
        """Apply the value plan; the item retires with the others."""
        done = self.value.apply(uow)
        return ItemForgetReport(
            self.item_id, self.item_id in done.retired, done.tombstone_id, tuple(i for i in done.retired if i != self.item_id), done
        )


@dataclass(frozen=True)
class SessionPlan:
    """What deleting a session will do: delete it and retire the items whose only evidence it is."""

    session_id: UUID
    reason: str
    deleted_already: bool
    retired: tuple[Retirement, ...]
    action: str = "forget-session"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dry_run_dict(self.action, self.retired, already=self.deleted_already, deleted_session=self.session_id)

    def apply(self, uow: UnitOfWork) -> SessionForgetReport:
        """Delete the session and retire the planned items still active. Raises ``NotFound`` when the session is gone."""
        app = uow.app

        def command() -> SessionForgetReport:
            session: Session | None = app.find(self.session_id)
            if session is None:
                raise NotFound(f"no session {self.session_id}")
            deleted = session.delete(self.reason)
            retired: list[MemoryItem] = []
            for planned in self.retired:
                item: MemoryItem | None = app.find(planned.item_id)
                if item is not None and item.retire(f"its only evidence, session {self.session_id}, was deleted", by=EditedBy.CODE):
                    retired.append(item)
            app.save_all(session, *retired)
            return SessionForgetReport(self.session_id, deleted, tuple(i.id for i in retired), app.last_written)

        report: SessionForgetReport = app.retrying(command)
        return report


@dataclass(frozen=True)
class LiftPlan:
    """What lifting a tombstone will do: lift it and restore the session texts and notes it scrubbed."""

    tombstone_id: UUID
    reason: str
    lifted_already: bool
    sessions: tuple[UUID, ...]  # sessions it scrubbed: their texts come back unless another tombstone holds them
    notes: tuple[UUID, ...]
    action: str = "lift"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "dry_run": True,
            "action": self.action,
            "tombstone": str(self.tombstone_id),
            "already": self.lifted_already,
            "restored_sessions": ids(self.sessions),
            "restored_notes": ids(self.notes),
        }

    def apply(self, uow: UnitOfWork) -> LiftReport:
        """Lift the tombstone and restore the planned texts. Raises ``NotFound``."""
        app = uow.app
        tombstone_id = self.tombstone_id

        def command() -> bool:
            tombstone = app.find(tombstone_id)
            if not isinstance(tombstone, Tombstone):
                raise NotFound(f"no tombstone {tombstone_id}")
            if not tombstone.lift(self.reason):
                return False
            app.save_all(tombstone)
            return True

        lifted: bool = app.retrying(command)
        matcher = uow.matcher()  # reads() waits for the lift: the matcher holds the tombstones still in force
        sessions = tuple(s for s in self.sessions if _restore(app, s, matcher, tombstone_id))
        notes = tuple(n for n in self.notes if _restore(app, n, matcher, tombstone_id))
        return LiftReport(tombstone_id, lifted, sessions, notes, app.last_written)


def plan_forget_value(uow: UnitOfWork, value: str, scope: str, reason: str = DEFAULT_REASON) -> ForgetPlan:
    """What forgetting ``value`` in ``scope`` will do, read from the views once; nothing is written.

    It retires the active items the tombstone reaches (a project tombstone:
    that project's items; global items stay for the other projects and are
    withheld from this project's reads) and those whose evidence quotes the
    value (their support would be cut out), and scrubs the session texts,
    notes and user profiles that carry it. Raises ValueError for a value with
    no words. A reason that repeats the value is stored with it cut out.
    """
    key = uow.tombstone_key()
    digest, width = fingerprint(key, value)
    rule = TombstoneRule(tombstone_id_for(digest, scope), digest, width, scope)
    matcher = TombstoneMatcher(key, [rule])
    reads = uow.reads()
    retired = []
    for row in reads.active_items():
        if matcher.withholds(row, row.scope):
            retired.append(Retirement.of(row, CARRIES))
        elif any(matcher.contains(s.quote, row.scope) for s in row.spans):
            retired.append(Retirement.of(row, QUOTES))
    sessions = tuple(s.session_id for s in reads.session_texts() if any(matcher.contains(t, s.scope) for t in s.texts))
    notes = tuple(n.note_id for n in reads.notes() if matcher.contains(n.text, n.scope))
    profiles = tuple(run for run, profile in reads.profiles() if matcher.contains(profile, EVERY_PROJECT))  # read everywhere
    found: Tombstone | None = uow.app.find(rule.tombstone_id)
    state = "place" if found is None else "re-arm" if found.lifted else "in force"
    return ForgetPlan(
        "forget-value", rule, matcher.scrub(reason or DEFAULT_REASON, scope)[0], state, tuple(retired), sessions, notes, profiles
    )


def plan_forget_session(uow: UnitOfWork, reference: UUID | str, reason: str = SESSION_REASON) -> SessionPlan:
    """What deleting a session will do: ``reference`` is its mnemolog id or its agent's own id. Raises ``NotFound``."""
    reads = uow.reads()
    session_id = reads.resolve_session(str(reference).strip())
    if session_id is None:
        raise NotFound(f"no session {reference} (give its mnemolog id or its agent's session id)")
    live = reads.live_session_ids() | reads.live_note_ids()  # a standing note is evidence too
    orphans = sole_evidence_items(reads.active_items(), frozenset({session_id}), live)
    session: Session | None = uow.app.find(session_id)
    deleted = session is not None and session.deleted
    return SessionPlan(session_id, reason, deleted, tuple(Retirement.of(r, SOLE_EVIDENCE) for r in orphans))


def plan_forget_item(uow: UnitOfWork, item_id: UUID, reason: str = ITEM_REASON) -> ItemForgetPlan:
    """What forgetting one item will do: it retires, and its text is forgotten in its scope as by ``plan_forget_value``.

    Raises ``NotFound`` for an unknown item, ValueError for an item with no words to tombstone.
    """
    found = uow.app.find(item_id)
    if not isinstance(found, MemoryItem):
        raise NotFound(f"no item {item_id}")
    value = plan_forget_value(uow, found.text or found.title, found.scope, reason)
    named = tuple(r for r in value.retired if r.item_id == item_id)
    if not named and found.is_active:
        named = (Retirement(item_id, found.kind, found.scope, NAMED),)
    retired = (*named, *(r for r in value.retired if r.item_id != item_id))
    return ItemForgetPlan(replace(value, action="forget-item", retired=retired, item_id=item_id))


def plan_lift(uow: UnitOfWork, tombstone_id: UUID, reason: str) -> LiftPlan:
    """What lifting a tombstone will do: the session texts and notes it scrubbed come back. Raises ``NotFound``."""
    app = uow.app
    tombstone = app.find(tombstone_id)
    if not isinstance(tombstone, Tombstone):
        raise NotFound(f"no tombstone {tombstone_id}")
    subjects = {
        (e.where, e.subject) for e in app.events.get(tombstone_id) if isinstance(e, Tombstone.Suppressed) and e.where in ("extraction", "note")
    }
    sessions = tuple(UUID(s) for where, s in sorted(subjects) if where == "extraction")
    notes = tuple(UUID(s) for where, s in sorted(subjects) if where == "note")
    return LiftPlan(tombstone_id, reason, tombstone.lifted, sessions, notes)


def forget_value(uow: UnitOfWork, value: str, scope: str, reason: str = DEFAULT_REASON) -> ForgetReport:
    """Forget ``value`` in ``scope`` now: ``plan_forget_value`` applied. Raises ValueError for a value with no words."""
    return plan_forget_value(uow, value, scope, reason).apply(uow)


def forget_session(uow: UnitOfWork, reference: UUID | str, reason: str = SESSION_REASON) -> SessionForgetReport:
    """Delete a session now: ``plan_forget_session`` applied. Raises ``NotFound``."""
    return plan_forget_session(uow, reference, reason).apply(uow)


def forget_item(uow: UnitOfWork, item_id: UUID, reason: str = ITEM_REASON) -> ItemForgetReport:
    """Forget one item now: ``plan_forget_item`` applied. Raises ``NotFound`` or ValueError."""
    return plan_forget_item(uow, item_id, reason).apply(uow)


def lift(uow: UnitOfWork, tombstone_id: UUID, reason: str) -> LiftReport:
    """Lift a tombstone now (as an event) and restore what it scrubbed; items it retired stay retired. Raises ``NotFound``.

    The session texts and notes it cut are put back as the log last held them
    (a ``Restored`` event each), cut again by the tombstones still in force.
    Text that is not in the log uncut stays as it is: a session first read
    while the tombstone was in force, or an erased one.
    """
    return plan_lift(uow, tombstone_id, reason).apply(uow)


def _scrub(app: MnemologApp, aggregate_id: UUID, matcher: TombstoneMatcher, tombstone_id: UUID, where: str) -> bool:
    """Scrub a session's texts, a note's text or a run's user profile, the suppression recorded with it; False when it carried no value."""

    def command() -> bool:
        aggregate = app.find(aggregate_id)
        if aggregate is None:
            return False
        scrub = getattr(aggregate, "scrub", None) or getattr(aggregate, "scrub_profile", None)
        if scrub is None or not scrub(matcher):
            return False
        tombstone: Tombstone = app.repository.get(tombstone_id)
        tombstone.record_suppression(where, str(aggregate_id))
        app.save_all(aggregate, tombstone)
        return True

    done: bool = app.retrying(command)
    return done


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
