"""Phase 2's contract: a plan of edits that code checks before anything is stored.

The model never writes files. It answers with a ``ConsolidationPlan``; every
edit names its evidence (session ids) and a reason.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from mnemolog.domain.item_kinds import GLOBAL_SCOPE as GLOBAL_SCOPE
from mnemolog.domain.item_kinds import ItemKindName as ItemKindName
from mnemolog.domain.skill import Skill
from pydantic import BaseModel, ConfigDict, Field


class Edit(BaseModel):
    """One proposed change to memory.

    ``target`` is the short handle of an existing item (for revise, retire,
    invalidate); ``op == "add"`` leaves it empty.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: Literal["add", "revise", "retire", "invalidate"]
    target: str | None = Field(default=None, description="Handle of the existing item, e.g. 'I3'.")
    kind: ItemKindName = ItemKindName.KNOWLEDGE
    scope: str = Field(default=GLOBAL_SCOPE, description="A project scope key, or 'global'.")
    task_group: str = Field(default="", description="Project or workflow family the item belongs to.")
    title: str = Field(default="", description="Short task title, with outcome for task items.")
    text: str = ""
    keywords: tuple[str, ...] = ()
    evidence: tuple[str, ...] = Field(default=(), description="Session ids that support the edit.")
    valid_from: datetime | None = None
    reason: str = ""
    skill: Skill | None = Field(
        default=None,
        description="For kind 'skill': its name, ordered steps and what it relies on; the text says when to use it.",
    )


class ConsolidationPlan(BaseModel):
    """A model's whole answer for one consolidation run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    edits: tuple[Edit, ...] = ()
    user_profile: str = Field(default="", description="At most 350 words on the user, from evidence.")
