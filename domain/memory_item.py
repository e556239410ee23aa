"""The MemoryItem aggregate: one unit of consolidated memory, with its history."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.domain import event
from mnemolog.domain.events import EventSourced
from mnemolog.domain.evidence_spans import EvidenceSpan
from mnemolog.domain.skill import SKILL_SEALED, Skill, map_texts


class ItemStatus(StrEnum):
    """Where an item stands."""

    ACTIVE = "active"
    RETIRED = "retired"
    INVALIDATED = "invalidated"


class Trust(StrEnum):
    """Review state of an item."""

    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    DOUBTED = "doubted"
    REJECTED = "rejected"


class EditedBy(StrEnum):
    """Who decided an edit."""

    MODEL = "model"
    CODE = "code"
    USER = "user"


class MemoryItem(EventSourced):
    """A preference, piece of knowledge, failure, task record or skill."""

    class Added(EventSourced.Created):
        """A consolidation (or a user) added the item."""

        sealed: ClassVar[tuple[str, ...]] = (
            "task_group", "title", "text", "keywords.*", "reason", "spans.*.quote", *SKILL_SEALED
        )
        kind: str
        scope: str
        task_group: str
        title: str
        text: str
        keywords: tuple[str, ...]
        evidence: tuple[UUID, ...]
        valid_from: datetime | None
        consolidation_id: UUID | None
        reason: str
        trust: Trust = Trust.PROPOSED
        by: EditedBy = EditedBy.MODEL
        spans: tuple[EvidenceSpan, ...] = ()  # where in its sessions the text is supported
        skill: Skill | None = None  # a skill's name, steps and what it relies on (its text: the description)

    class Revised(EventSourced.Event):
        """The item's text, keywords or evidence changed."""

        sealed: ClassVar[tuple[str, ...]] = ("title", "text", "keywords.*", "reason", "spans.*.quote", *SKILL_SEALED)
        title: str
        text: str
        keywords: tuple[str, ...]
        evidence: tuple[UUID, ...]
        valid_from: datetime | None
        consolidation_id: UUID | None
        reason: str
        by: EditedBy = EditedBy.MODEL
        spans: tuple[EvidenceSpan, ...] | None = None  # None: the spans stay as they were
        skill: Skill | None = None  # None: the skill's steps stay as they were

        def apply(self, aggregate: Any) -> None:
            """Replace the content."""
            aggregate.title = self.title
            aggregate.text = self.text
            aggregate.keywords = self.keywords
            aggregate.evidence = self.evidence
            if self.valid_from is not None:
                aggregate.valid_from = self.valid_from
            if self.spans is not None:
                aggregate.spans = self.spans
            if self.skill is not None:
                aggregate.skill = self.skill

    class Retired(EventSourced.Event):
        """Withdrawn: it should not be memory (or its evidence is gone)."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        reason: str
        consolidation_id: UUID | None = None
        by: EditedBy = EditedBy.MODEL
        tombstone_id: UUID | None = None

        def apply(self, aggregate: Any) -> None:
            """Mark retired."""
            aggregate.status = ItemStatus.RETIRED

    class Invalidated(EventSourced.Event):
        """Its valid time ended: superseded in the world, kept in history."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        valid_to: datetime
        reason: str
        consolidation_id: UUID | None = None
        by: EditedBy = EditedBy.MODEL

        def apply(self, aggregate: Any) -> None:
            """End the valid time."""
            aggregate.status = ItemStatus.INVALIDATED
            aggregate.valid_to = self.valid_to

    class Reviewed(EventSourced.Event):
        """Someone accepted, rejected or doubted the item."""

        sealed: ClassVar[tuple[str, ...]] = ("note",)
        verdict: Trust
        reviewer: str
        note: str = ""

        def apply(self, aggregate: Any) -> None:
            """Set the trust state."""
            aggregate.trust = self.verdict

    class Edited(EventSourced.Event):
        """A person rewrote the item's text (and title); consolidations keep their words (the offline one changes only evidence)."""

        sealed: ClassVar[tuple[str, ...]] = ("title", "text", "reason")
        title: str
        text: str
        editor: str
        reason: str = ""
        by: EditedBy = EditedBy.USER

        def apply(self, aggregate: Any) -> None:
            """Replace the text and title."""
            aggregate.title = self.title
            aggregate.text = self.text

    class Pinned(EventSourced.Event):
        """A person pinned the item: it comes first in context and the folder, and no model retires it."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        pinner: str
        reason: str = ""
        by: EditedBy = EditedBy.USER

        def apply(self, aggregate: Any) -> None:
            """Mark pinned."""
            aggregate.pinned = True

    class Unpinned(EventSourced.Event):
        """A person took the pin off: the item ranks and ages like any other again."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        pinner: str
        reason: str = ""
        by: EditedBy = EditedBy.USER

        def apply(self, aggregate: Any) -> None:
            """Mark not pinned."""
            aggregate.pinned = False

    class ScopeChanged(EventSourced.Event):
        """A person moved the item to another scope: a project, or the user (global)."""

        sealed: ClassVar[tuple[str, ...]] = ("reason",)
        scope: str
        previous: str
        editor: str
        reason: str = ""
        by: EditedBy = EditedBy.USER

        def apply(self, aggregate: Any) -> None:
            """Set the scope."""
            aggregate.scope = self.scope

    class Rerecorded(EventSourced.Event):
        """The item's current texts, recorded again under a new data key (an erase destroyed the old keys)."""

        sealed: ClassVar[tuple[str, ...]] = ("task_group", "title", "text", "keywords.*", "spans.*.quote", *SKILL_SEALED)
        task_group: str
        title: str
        text: str
        keywords: tuple[str, ...]
        spans: tuple[EvidenceSpan, ...] = ()
        skill: Skill | None = None

        def apply(self, aggregate: Any) -> None:
            """The texts as they stood when re-recorded."""
            aggregate.task_group = self.task_group
            aggregate.title = self.title
            aggregate.text = self.text
            aggregate.keywords = self.keywords
            aggregate.spans = self.spans
            if self.skill is not None:
                aggregate.skill = self.skill

    @event(Added)
    def __init__(
        self,
        kind: str,
        scope: str,
        task_group: str,
        title: str,
        text: str,
        keywords: tuple[str, ...],
        evidence: tuple[UUID, ...],
        valid_from: datetime | None,
        consolidation_id: UUID | None,
        reason: str,
        trust: Trust = Trust.PROPOSED,
        by: EditedBy = EditedBy.MODEL,
        spans: tuple[EvidenceSpan, ...] = (),
        skill: Skill | None = None,
    ) -> None:
        self.spans = spans
        self.skill = skill
        self.kind = kind
        self.scope = scope
        self.task_group = task_group
        self.title = title
        self.text = text
        self.keywords = keywords
        self.evidence = evidence
        self.valid_from = valid_from
        self.valid_to: datetime | None = None
        self.trust = trust
        self.status = ItemStatus.ACTIVE
        self.pinned = False

    @property
    def is_active(self) -> bool:
        """True while the item is part of current memory."""
        return self.status == ItemStatus.ACTIVE

    def revise(self, **fields: Any) -> None:
        """Change content (title, text, keywords, evidence, valid_from, consolidation_id, reason, by)."""
        self.trigger_event(self.Revised, **fields)

    def retire(
        self,
        reason: str,
        consolidation_id: UUID | None = None,
        by: EditedBy = EditedBy.MODEL,
        tombstone_id: UUID | None = None,
    ) -> bool:
        """Withdraw the item; no event if it is no longer active."""
        if not self.is_active:
            return False
        self.trigger_event(
            self.Retired, reason=reason, consolidation_id=consolidation_id, by=by, tombstone_id=tombstone_id
        )
        return True

    def invalidate(
        self, valid_to: datetime, reason: str, consolidation_id: UUID | None = None, by: EditedBy = EditedBy.MODEL
    ) -> bool:
        """End the item's valid time; no event if it is no longer active."""
        if not self.is_active:
            return False
        self.trigger_event(
            self.Invalidated, valid_to=valid_to, reason=reason, consolidation_id=consolidation_id, by=by
        )
        return True

    def rerecord(self, matcher: Any) -> None:
        """Record the current texts again, ``matcher``'s values cut out (an erase: under a new key)."""

        def cut(text: str) -> str:
            return str(matcher.scrub(text, None)[0]) if text else text

        self.trigger_event(
            self.Rerecorded,
            task_group=cut(self.task_group),
            title=cut(self.title),
            text=cut(self.text),
            keywords=tuple(cut(k) for k in self.keywords),
            spans=tuple(s for s in self.spans if not matcher.contains(s.quote, None)),  # a quote of the value goes whole
            skill=map_texts(getattr(self, "skill", None), cut),
        )

    def review(self, verdict: Trust, reviewer: str, note: str = "") -> None:
        """Record a review verdict."""
        self.trigger_event(self.Reviewed, verdict=verdict, reviewer=reviewer, note=note)

    def edit(self, text: str, title: str, editor: str, reason: str = "") -> bool:
        """Record a person's new text and title; no event when both are unchanged."""
        if text == self.text and title == self.title:
            return False
        self.trigger_event(self.Edited, title=title, text=text, editor=editor, reason=reason)
        return True

    def pin(self, pinner: str, pinned: bool = True, reason: str = "") -> bool:
        """Pin (or unpin) the item; no event when it already is so."""
        if bool(getattr(self, "pinned", False)) == pinned:
            return False
        self.trigger_event(self.Pinned if pinned else self.Unpinned, pinner=pinner, reason=reason)
        return True

    def change_scope(self, scope: str, editor: str, reason: str = "") -> bool:
        """Move the item to ``scope``; no event when it is already there."""
        if scope == self.scope:
            return False
        self.trigger_event(self.ScopeChanged, scope=scope, previous=self.scope, editor=editor, reason=reason)
        return True
