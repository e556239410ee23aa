"""Erase: forget a value and make it unreadable in the whole log, historical events included.

The log is immutable, so a forgotten value stays in the events recorded
before the forget. Those events hold it only sealed, under data keys of the
aggregate it belongs to (``domain.sealing``). Erasing:

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
from mnemolog.domain.services.forget import DEFAULT_REASON, forget_value
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.tombstone import tombstone_id_for
from mnemolog.domain.tombstone_matcher import (
    EVERY_PROJECT,
    TombstoneMatcher,
    TombstoneRule,
    fingerprint,
)

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


def erase_value(
    uow: UnitOfWork,
    value: str,
    keys: DataKeys,
    copies: StoredCopies,
    reason: str = ERASE_REASON,
    *,
    dry_run: bool = False,
) -> EraseReport:
    """Forget ``value`` everywhere and destroy the keys of every aggregate that ever carried it.

    ``dry_run`` finds what would be erased and changes nothing. Raises
    ValueError for a value with no words.
    """
    key = uow.tombstone_key()
    digest, width = fingerprint(key, value)
    tombstone_id = tombstone_id_for(digest, GLOBAL_SCOPE)
    only = TombstoneMatcher(key, [TombstoneRule(tombstone_id, digest, width, GLOBAL_SCOPE)])
    app = uow.app
    if dry_run:
        carriers = find_carriers(app, only)
        return EraseReport(tombstone_id, True, carriers.counts(), 0, carriers.unsealed_events)
    forgot = forget_value(uow, value, GLOBAL_SCOPE, reason or DEFAULT_REASON)
    carriers = find_carriers(app, only)
    destroyed = 0
    for aggregate_id in carriers.aggregates:

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
    return EraseReport(
        tombstone_id,
        False,
        carriers.counts(),
        destroyed,
        carriers.unsealed_events,
        forgot.retired,
        forgot.scrubbed_sessions,
    )
