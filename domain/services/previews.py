"""What a destructive command would do, computed without writing anything (``--dry-run``, the web's forget preview).

Each preview applies the same rules as the command itself: the one tombstone
rule (``matcher.withholds`` / ``contains`` in the scope of the item or text),
sole evidence (``evidence.sole_evidence_items``) and the prune plan
(``retention.prune_plan``). No event is written: the log is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from mnemolog.domain.evidence import sole_evidence_items
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.retention import prune_plan
from mnemolog.domain.services.forget import NotFound
from mnemolog.domain.services.retention import RETENTION, SELECTION_LIMIT
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.tombstone import tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint


@dataclass(frozen=True)
class Preview:
    """What a forget or prune would retire, scrub or prune (never a forgotten value)."""

    action: str  # forget-value | forget-session | forget-item | prune
    retired: tuple[ItemRow, ...]  # active items it would retire
    scrubbed_sessions: tuple[UUID, ...] = ()  # sessions whose stored texts it would scrub
    scrubbed_notes: int = 0
    pruned_sessions: tuple[UUID, ...] = ()  # extractions a prune would withdraw
    deleted_session: UUID | None = None
    tombstone_id: UUID | None = None  # the tombstone a forget would place (or re-arm)
    already: bool = False  # that tombstone is already in force
    scope: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: ids and item kinds and scopes, not item texts (they may carry the value)."""
        return {
            "dry_run": True,
            "action": self.action,
            "scope": self.scope,
            "tombstone": str(self.tombstone_id) if self.tombstone_id else None,
            "already": self.already,
            "retired": [str(i.item_id) for i in self.retired],
            "retired_items": [{"id": str(i.item_id), "kind": i.kind, "scope": i.scope} for i in self.retired],
            "scrubbed_sessions": [str(s) for s in self.scrubbed_sessions],
            "scrubbed_notes": self.scrubbed_notes,
            "pruned": [str(s) for s in self.pruned_sessions],
            "deleted_session": str(self.deleted_session) if self.deleted_session else None,
        }


def preview_forget_value(uow: UnitOfWork, value: str, scope: str) -> Preview:
    """What ``forget_value(uow, value, scope)`` would retire and scrub. Raises ValueError for a value with no words."""
    key = uow.tombstone_key()
    digest, width = fingerprint(key, value)
    tombstone_id = tombstone_id_for(digest, scope)
    matcher = TombstoneMatcher(key, [TombstoneRule(tombstone_id, digest, width, scope)])
    reads = uow.reads()
    carriers = tuple(i for i in reads.active_items() if matcher.withholds(i, i.scope))
    sessions = tuple(s.session_id for s in reads.session_texts() if any(matcher.contains(t, s.scope) for t in s.texts))
    notes = sum(1 for n in reads.notes() if matcher.contains(n.text, n.scope))
    already = any(r.tombstone_id == tombstone_id for r in reads.tombstone_rules())
    return Preview("forget-value", carriers, sessions, notes, tombstone_id=tombstone_id, already=already, scope=scope)


def preview_forget_session(uow: UnitOfWork, reference: UUID | str) -> Preview:
    """What ``forget_session`` would delete and retire. Raises ``NotFound``."""
    reads = uow.reads()
    session_id = reads.resolve_session(str(reference).strip())
    if session_id is None:
        raise NotFound(f"no session {reference} (give its mnemolog id or its agent's session id)")
    orphans = sole_evidence_items(reads.active_items(), frozenset({session_id}), reads.live_session_ids() | reads.live_note_ids())
    return Preview("forget-session", tuple(orphans), deleted_session=session_id)


def preview_forget_item(uow: UnitOfWork, item_id: UUID) -> Preview:
    """What ``forget_item`` would retire and scrub: the item, and whatever carries its text in its scope. Raises ``NotFound``."""
    found = uow.app.find(item_id)
    if not isinstance(found, MemoryItem):
        raise NotFound(f"no item {item_id}")
    preview = preview_forget_value(uow, found.text or found.title, found.scope)
    row = next((i for i in uow.reads().active_items() if i.item_id == item_id), None)
    retired = preview.retired if row is None or row in preview.retired else (row, *preview.retired)
    return Preview(
        "forget-item", retired, preview.scrubbed_sessions, preview.scrubbed_notes,
        tombstone_id=preview.tombstone_id, already=preview.already, scope=found.scope,
    )


def preview_prune(uow: UnitOfWork, *, retention: timedelta = RETENTION, limit: int = SELECTION_LIMIT) -> Preview:
    """What ``retention.prune`` would prune and retire now."""
    reads = uow.reads()
    plan = prune_plan(reads.candidates(), uow.clock(), retention, limit)
    gone = frozenset(plan.sessions)
    live = (reads.live_session_ids() | reads.live_note_ids()) - gone
    orphans = sole_evidence_items(reads.active_items(), gone, live)
    return Preview("prune", tuple(orphans), pruned_sessions=plan.sessions)
