"""The smallest plan schema that carries phase 2's decision, for small local models.

The full ``ConsolidationPlan`` asks eleven fields of every edit (strict JSON
schemas make each one required). A small model given that schema writes long
answers and loops; this one asks for the fields a decision needs: what to do
(``op``), to which item (``target``, a handle), what the item says (``kind``,
``scope``, ``title``, ``text``; a skill's ``steps``), on what evidence, and why. Code fills the rest:
the task group from the scope, keywords from the title, no validity date (an
invalidation takes effect at the run).
"""

from __future__ import annotations

import re
from typing import Literal

from mnemolog.domain.plan import ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.skill import Skill, SkillStep, slug
from pydantic import BaseModel, ConfigDict, Field

_WORD = re.compile(r"[A-Za-z0-9_.-]{3,}")


class CompactEdit(BaseModel):
    """One edit, as a small model writes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: Literal["add", "revise", "retire", "invalidate"]
    target: str | None = Field(description="The handle of the item to change, e.g. 'I2'; null for add.")
    kind: ItemKindName
    scope: str = Field(description="Copy the scope of the session you cite.")
    title: str
    text: str
    evidence: list[str] = Field(description="Session ids and note ids copied from the input.")
    reason: str
    steps: list[str] = Field(description="For kind skill: its commands in order (the title is its name); [] otherwise.")


class CompactPlan(BaseModel):
    """A small model's whole answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    edits: list[CompactEdit]


def _task_group(scope: str) -> str:
    return re.split(r"[/:]", scope.rstrip("/"))[-1] or scope


def to_plan(compact: CompactPlan) -> ConsolidationPlan:
    """The full plan code checks and applies."""
    return ConsolidationPlan(
        edits=tuple(
            Edit(
                op=e.op,
                target=e.target or None,
                kind=e.kind,
                scope=e.scope,
                task_group=_task_group(e.scope),
                title=e.title,
                text=e.text,
                keywords=tuple(dict.fromkeys(w.lower() for w in _WORD.findall(e.title)))[:6],
                evidence=tuple(e.evidence),
                reason=e.reason,
                skill=_skill(e),
            )
            for e in compact.edits
        )
    )


def _skill(edit: CompactEdit) -> Skill | None:
    """A skill edit's steps; its name is its title as a slug (a revise keeps the skill's own name)."""
    steps = tuple(SkillStep(command=" ".join(s.split())) for s in edit.steps if s.strip())
    if edit.kind != ItemKindName.SKILL or not steps:
        return None
    return Skill(name=slug(edit.title or edit.text), steps=steps)


def from_plan(plan: ConsolidationPlan) -> CompactPlan:
    """A plan in the compact form (the repair round hands the model back its own answer)."""
    return CompactPlan(
        edits=[
            CompactEdit(
                op=e.op, target=e.target, kind=e.kind, scope=e.scope, title=e.title, text=e.text,
                evidence=list(e.evidence), reason=e.reason,
                steps=[s.command or s.action for s in e.skill.steps] if e.skill is not None else [],
            )
            for e in plan.edits
        ]
    )
