"""Erase: forget a value and make it unreadable in the whole log, historical events included.

The log is immutable, so a forgotten value stays in the events recorded
before the forget. Those events hold it only sealed, under data keys of the
aggregate it belongs to (``domain.sealing``). Erasing:

``plan_erase`` finds all of it (one pass over the log) and writes nothing; the
plan's ``apply``:

1. forgets the value everywhere (a global tombstone: items retire, stored
   texts are scrubbed, as ``forget_value`` does);
2. finds every aggregate whose events, any of them, carry the value in a
   sealed text: sessions, items, notes, runs, citations;
3. for each, gives it a new data key, records its current texts again under
   that key with the value cut out (what must survive), then destroys every
   older key: each earlier event of it reads ``[erased]`` where text was;
4. has the store rebuild its views from the log and compact its files, so
   no copy of the value is left beside the log.

Events stored before sealing existed hold their text in clear; they cannot be
erased and are counted in the report.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.ports import DataKeys, StoredCopies
from mnemolog.domain.sealing import SEALED_KEY, sealed_paths, sealed_texts
from mnemolog.domain.services.forget import (
    DEFAULT_REASON,
    ForgetPlan,
    ForgetReport,
    plan_forget_value,
)
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher

ERASE_REASON = "erased at the user's request"


@dataclass
class Carriers:
    """What in the log carries a value: aggregates by kind, and events stored in clear."""

    aggregates: dict[UUID, str] = field(default_factory=dict)  # aggregate id -> kind (session, item, ...)
    unsealed_events: int = 0  # events written before sealing: their text cannot be erased

    def counts(self) -> dict[str, int]:
        """How many aggregates of each kind."""
        found: dict[str, int] = {}
        for kind in self.aggregates.values():
            found[kind] = found.get(kind, 0) + 1
        return dict(sorted(found.items()))


@dataclass(frozen=True)
class EraseReport:
    """What erasing a value did (never the value)."""

    tombstone_id: UUID
    dry_run: bool
    erased: dict[str, int]  # aggregates re-recorded under new keys, by kind
    keys_destroyed: int
    unsealed_events: int
    retired: tuple[UUID, ...] = ()
    scrubbed_sessions: tuple[UUID, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "tombstone": str(self.tombstone_id),
            "scope": GLOBAL_SCOPE,
            "dry_run": self.dry_run,
            "erased": self.erased,
            "keys_destroyed": self.keys_destroyed,
            "unsealed_events": self.unsealed_events,
            "retired": [str(i) for i in self.retired],
            "scrubbed_sessions": [str(s) for s in self.scrubbed_sessions],
        }


def _kind(event: Any) -> str:
    return type(event).__qualname__.split(".")[0].lower().replace("memoryitem", "item")


def _log(app: MnemologApp) -> Iterator[tuple[bytes, Any]]:
    for n in app.notifications():
        yield bytes(n.state), app.mapper.to_domain_event(n)


def find_carriers(app: MnemologApp, matcher: TombstoneMatcher) -> Carriers:
    """Every aggregate whose events carry one of ``matcher``'s values in a sealed text."""
    found = Carriers()
    marker = SEALED_KEY.encode()
    for state, event in _log(app):
        paths = sealed_paths(type(event))
        if not paths:
            continue
        texts = sealed_texts(event.model_dump(mode="json"), paths)
        if not any(matcher.contains(text, EVERY_PROJECT) for text in texts):
            continue
        if marker not in state:
            found.unsealed_events += 1
        found.aggregates.setdefault(event.originator_id, _kind(event))
    return found


@dataclass(frozen=True)
class ErasePlan:
    """What erasing a value will do: forget it everywhere (``forget``), then re-key every aggregate that ever carried it."""

    forget: ForgetPlan
    aggregates: tuple[tuple[UUID, str], ...]  # (aggregate id, kind) whose data keys are destroyed
    unsealed_events: int  # events stored in clear before sealing: they cannot be erased
    action: str = "erase"

    @property
    def tombstone_id(self) -> UUID:
        """The global tombstone placed."""
        return self.forget.tombstone_id

    def counts(self) -> dict[str, int]:
        """How many aggregates of each kind are re-keyed."""
        found: dict[str, int] = {}
        for _, kind in self.aggregates:
            found[kind] = found.get(kind, 0) + 1
        return dict(sorted(found.items()))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (that of a dry run's report), with what the forget will retire and scrub."""
        return {
            **self.report(0).as_dict(),
            "retired": [str(r.item_id) for r in self.forget.retired],
            "scrubbed_sessions": [str(s) for s in self.forget.sessions],
            "scrubbed_notes": [str(n) for n in self.forget.notes],
        }

    def report(self, destroyed: int, forgot: ForgetReport | None = None) -> EraseReport:
        """The report of this plan: a dry run's without ``forgot``."""
        return EraseReport(
            self.tombstone_id,
            forgot is None,
            self.counts(),
            destroyed,
            self.unsealed_events,
            forgot.retired if forgot else (),
            forgot.scrubbed_sessions if forgot else (),
        )

    def apply(self, uow: UnitOfWork, keys: DataKeys, copies: StoredCopies) -> EraseReport:
        """Apply the forget, re-record each planned aggregate under a new key and destroy its old keys, then purge the copies."""
        forgot = self.forget.apply(uow)
        app = uow.app
        only = TombstoneMatcher(uow.tombstone_key(), [self.forget.rule])
        destroyed = 0
        for aggregate_id, _ in self.aggregates:

            def command(aggregate_id: UUID = aggregate_id) -> None:
                aggregate = app.find(aggregate_id)
                if aggregate is None:
                    return
                keys.rotate(aggregate_id)  # what is recorded now is sealed under the new key
                aggregate.rerecord(only)
                app.save_all(aggregate)

            app.retrying(command)
            destroyed += keys.shred(aggregate_id)
        copies.purge_copies()
        return self.report(destroyed, forgot)


def plan_erase(uow: UnitOfWork, value: str, reason: str = ERASE_REASON) -> ErasePlan:
    """What erasing ``value`` will do: the global forget's plan and every aggregate whose events carry it (one pass over the log).

    Nothing is written. Raises ValueError for a value with no words.
    """
    forget = plan_forget_value(uow, value, GLOBAL_SCOPE, reason or DEFAULT_REASON)
    carriers = find_carriers(uow.app, TombstoneMatcher(uow.tombstone_key(), [forget.rule]))
    return ErasePlan(forget, tuple(carriers.aggregates.items()), carriers.unsealed_events)


def erase_value(
    uow: UnitOfWork,
    value: str,
    keys: DataKeys,
    copies: StoredCopies,
    reason: str = ERASE_REASON,
    *,
    dry_run: bool = False,
) -> EraseReport:
    """Forget ``value`` everywhere and destroy the keys of every aggregate that ever carried it: ``plan_erase`` applied.

    ``dry_run`` reports the plan and changes nothing. Raises ValueError for a
    value with no words.
    """
    plan = plan_erase(uow, value, reason)
    return plan.report(0) if dry_run else plan.apply(uow, keys, copies)
