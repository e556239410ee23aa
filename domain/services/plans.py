"""What every destructive use case shares: it is planned first, without writing, then the plan is applied.

A ``plan_*`` function (forget, retention, erase) reads the views once and
returns a frozen plan naming exactly what would change: the items it would
retire and why, the texts it would scrub, the session it would delete, the
tombstone it would place. A dry run prints the plan; a confirmation prompt
shows it; ``plan.apply(uow)`` carries out that plan and no more, re-reading
each aggregate as it writes (the log may have moved since), so an item
already retired meanwhile is left alone. A plan never holds a forgotten
value, nor any stored text: only ids, kinds, scopes and counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.reads import ItemRow

# Why a plan retires an item (shown by dry runs and prompts).
CARRIES = "carries the value"
QUOTES = "its evidence quotes the value"
NAMED = "the item forgotten"
SOLE_EVIDENCE = "its only evidence goes"
EVERYTHING = "every active item goes"


@dataclass(frozen=True)
class Retirement:
    """An item a plan retires, and why (no text: item texts may carry a forgotten value)."""

    item_id: UUID
    kind: str
    scope: str
    why: str

    @classmethod
    def of(cls, row: ItemRow, why: str) -> Retirement:
        """The retirement of the item ``row``."""
        return cls(row.item_id, row.kind, row.scope, why)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"id": str(self.item_id), "kind": self.kind, "scope": self.scope, "why": self.why}


def ids(values: tuple[UUID, ...] | list[UUID]) -> list[str]:
    """Ids as JSON strings."""
    return [str(v) for v in values]


def dry_run_dict(
    action: str,
    retired: tuple[Retirement, ...],
    *,
    scope: str | None = None,
    tombstone: UUID | None = None,
    already: bool = False,
    sessions: tuple[UUID, ...] = (),
    notes: tuple[UUID, ...] = (),
    profiles: tuple[UUID, ...] = (),
    pruned: tuple[UUID, ...] = (),
    deleted_session: UUID | None = None,
) -> dict[str, Any]:
    """The one JSON shape of a forget's or a prune's dry run: ids, kinds and scopes, never a text."""
    return {
        "dry_run": True,
        "action": action,
        "scope": scope,
        "tombstone": str(tombstone) if tombstone else None,
        "already": already,
        "retired": ids([r.item_id for r in retired]),
        "retired_items": [r.as_dict() for r in retired],
        "scrubbed_sessions": ids(sessions),
        "scrubbed_notes": len(notes),
        "scrubbed_note_ids": ids(notes),
        "scrubbed_profiles": ids(profiles),
        "pruned": ids(pruned),
        "deleted_session": str(deleted_session) if deleted_session else None,
    }
