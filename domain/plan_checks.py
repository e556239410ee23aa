"""Code checks a consolidation plan before anything is stored.

Each edit is checked on its own (``screen_plan``). An edit that names an
unknown handle, edits an item twice, cites no evidence or cites sessions that
were not selected is dropped with its reason while the rest of the plan still
applies. What must never pass refuses the whole plan: a tombstoned value, or a
scope violation (evidence of another project, a note of another scope, a global
item without cross-project evidence). A skill edit is checked like any other,
and is dropped when it brings no valid skill (a name that is a folder-safe slug,
at least two steps) or a name another active skill of its scope already has. Separately, code retires items the model
kept although all their evidence is gone, or that carry a forgotten value.

Evidence is sessions and notes: a plan may cite a selected session, or a
pending note of the item's own scope (a project note for that project's items,
a global note for global items); a revise may keep evidence its item already
has. An item's evidence stands while a session is live or a note is not
withdrawn, so an item two notes ask for stays while either stands. A note is
applied only when an item of its own scope carries it (``carried_notes``);
otherwise it stays pending.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal
from uuid import UUID

from mnemolog.domain.consolidation import Override
from mnemolog.domain.holes import has_hole
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.skill import Skill, skill_problem, skill_texts
from mnemolog.domain.tombstone_matcher import TombstoneMatcher


def describe_edit(edit: Edit, index: int) -> str:
    """A short, value-free description of an edit for the audit."""
    target = f" {edit.target}" if edit.target else ""
    return f"edit {index + 1}: {edit.op}{target} ({edit.kind.value}, scope {edit.scope})"


def _parse_ids(values: Sequence[str]) -> tuple[list[UUID], list[str]]:
    ok, bad = [], []
    for value in values:
        try:
            ok.append(UUID(value.strip()))
        except ValueError:
            bad.append(value)
    return ok, bad


Severity = Literal["drop", "refuse"]
"""``drop``: the edit alone is left out; ``refuse``: the whole plan is (it must never pass)."""


def _edit_problem(
    edit: Edit,
    target: ItemRow | None,
    selected_scopes: Mapping[UUID, str],
    note_scopes: Mapping[UUID, str],
    matcher: TombstoneMatcher,
) -> tuple[Severity, str] | None:
    """The first rule an edit with a known target (or an add) breaks, and how grave it is."""
    if edit.op in ("retire", "invalidate"):
        return None
    ids, bad = _parse_ids(edit.evidence)
    already = set(target.evidence) if (target is not None and edit.op == "revise") else set()
    notes = [i for i in ids if i in note_scopes]
    kept = [i for i in ids if i not in note_scopes and i not in selected_scopes and i in already]
    sessions = [i for i in ids if i not in note_scopes and i not in kept]
    scope = target.scope if (target is not None and edit.op == "revise") else edit.scope
    if matcher.withholds(edit, scope):
        return "refuse", "the edit contains a forgotten value (tombstone)"
    if _holed(edit):
        return "drop", "the edit carries text cut out by a tombstone (a placeholder, not memory)"
    unknown = [str(i) for i in sessions if i not in selected_scopes] + bad
    if unknown:
        return "drop", "evidence names sessions that were not selected: " + ", ".join(sorted(unknown))
    if not ids:
        return "drop", "no evidence"
    foreign = sorted(str(n) for n in notes if note_scopes[n] != scope)
    if foreign:
        return "refuse", f"notes of another scope are no evidence for an item of scope {scope}: " + ", ".join(foreign)
    evidence_scopes = {selected_scopes[i] for i in sessions}
    if scope != GLOBAL_SCOPE and not (scope in evidence_scopes or notes or kept):
        return "refuse", f"scope {scope} is not covered by its evidence (from {', '.join(sorted(evidence_scopes)) or 'notes only'})"
    if scope == GLOBAL_SCOPE and not (len(evidence_scopes) > 1 or notes or kept or edit.kind == ItemKindName.PREFERENCE):
        return "refuse", "a global item needs evidence from more than one project or an explicit user statement"
    return None


@dataclass(frozen=True)
class ScreenedPlan:
    """A plan after each edit was checked on its own.

    ``plan`` holds the edits that may be applied; ``dropped`` the edits left out
    (with their reasons); ``refusals`` what must never pass, which refuses the
    whole plan (then nothing of it is applied).
    """

    plan: ConsolidationPlan
    dropped: tuple[Override, ...] = ()
    refusals: tuple[Override, ...] = ()

    @property
    def refused(self) -> bool:
        """True when the plan must not be applied at all."""
        return bool(self.refusals)

    @property
    def clean(self) -> bool:
        """True when every edit passed."""
        return not self.dropped and not self.refusals

    @property
    def usable(self) -> bool:
        """True when the plan may be applied and has at least one edit."""
        return not self.refused and bool(self.plan.edits)

    @property
    def rejected(self) -> tuple[Override, ...]:
        """Everything code turned down, dropped edits first."""
        return (*self.dropped, *self.refusals)


def screen_plan(
    plan: ConsolidationPlan,
    *,
    handles: Mapping[str, ItemRow],
    selected_scopes: Mapping[UUID, str],
    note_scopes: Mapping[UUID, str],
    matcher: TombstoneMatcher,
) -> ScreenedPlan:
    """Check every edit on its own: drop what cannot apply, refuse the plan for what must never pass.

    Skill edits (an add of kind ``skill``, a revise of a skill) also need a
    valid skill (``domain.skill.skill_problem``: a slug name, two steps or
    more) whose name no other active skill of the scope, and no earlier edit
    of this plan, holds; a revise keeps its skill's name.
    """
    applicable, dropped = _applicable(plan, handles)
    kept: list[Edit] = []
    refusals: list[Override] = []
    names = _SkillNames(handles)
    for index, edit in applicable:
        target = handles.get(edit.target or "") if edit.op != "add" else None
        found = (
            _kept_by_age(edit, target, selected_scopes)
            or _edit_problem(edit, target, selected_scopes, note_scopes, matcher)
            or names.problem(edit, target)
        )
        if found is None:
            names.claim(edit, target)
            kept.append(edit)
            continue
        item_id = target.item_id if target is not None else None
        override = Override(action="rejected", reason=found[1], edit=describe_edit(edit, index), item_id=item_id)
        (dropped if found[0] == "drop" else refusals).append(override)
    dropped.sort(key=lambda o: _position(o.edit))
    return ScreenedPlan(plan.model_copy(update={"edits": tuple(kept)}), tuple(dropped), tuple(refusals))


def _kept_by_age(edit: Edit, target: ItemRow | None, selected_scopes: Mapping[UUID, str]) -> tuple[str, str] | None:
    """A retire of an item a person vouched for (accepted, edited or cited it) whose sessions only left the selection: dropped.

    Age is no reason to forget what a person kept: such an item stays until its
    evidence is really gone (deleted, pruned, polluted: ``code_retirements``),
    a person retires it, or a later session supersedes it (an invalidate).
    """
    if edit.op != "retire" or target is None or any(e in selected_scopes for e in target.evidence):
        return None
    why = "accepted by a person" if target.trust == "accepted" else "edited by a person" if target.edited_by_user else "cited by an agent" if target.use_count else ""
    if not why:
        return None
    return "drop", f"{edit.target} was {why}: kept when its sessions leave the retention window"


class _SkillNames:
    """The skill names each scope holds, so a plan cannot give two active skills of one scope the same folder."""

    def __init__(self, handles: Mapping[str, ItemRow]) -> None:
        self.taken: dict[tuple[str, str], str] = {}  # (scope, name) -> the handle holding it ("" for a new one)
        for handle, item in handles.items():
            if item.kind == ItemKindName.SKILL and item.skill is not None and item.status == "active":
                self.taken[(item.scope, item.skill.name)] = handle

    @staticmethod
    def _skill_of(edit: Edit, target: ItemRow | None) -> tuple[bool, Skill | None, str]:
        """Whether the edit makes or changes a skill, the skill it leaves, and its scope."""
        if edit.op == "add":
            return edit.kind == ItemKindName.SKILL, edit.skill, edit.scope
        if edit.op == "revise" and target is not None and target.kind == ItemKindName.SKILL:
            if edit.skill is not None and target.skill is not None:  # a revise keeps the skill's name
                return True, edit.skill.model_copy(update={"name": target.skill.name}), target.scope
            return True, edit.skill or target.skill, target.scope
        return False, None, edit.scope

    def problem(self, edit: Edit, target: ItemRow | None) -> tuple[Severity, str] | None:
        """Why a skill edit cannot apply: no valid skill (a name, two steps), or a name its scope already uses."""
        is_skill, skill, scope = self._skill_of(edit, target)
        if not is_skill:
            return None
        found = skill_problem(skill)
        if found is not None:
            return "drop", found
        assert skill is not None
        holder = self.taken.get((scope, skill.name))
        if holder is not None and (edit.op == "add" or holder != edit.target):
            return "drop", f"the skill name {skill.name!r} is already used in scope {scope}"
        return None

    def claim(self, edit: Edit, target: ItemRow | None) -> None:
        """Record the name an applied skill edit holds from now on."""
        is_skill, skill, scope = self._skill_of(edit, target)
        if not is_skill or skill is None:
            return
        if target is not None and target.skill is not None and target.skill.name != skill.name:
            self.taken.pop((scope, target.skill.name), None)
        self.taken[(scope, skill.name)] = edit.target or "+"  # "+": added by this plan


def _position(description: str) -> int:
    """The edit's number in a ``describe_edit`` text (``edit 3: ...`` -> 3)."""
    head = description.split(":", 1)[0].removeprefix("edit ").strip()
    return int(head) if head.isdigit() else 0


def _applicable(plan: ConsolidationPlan, handles: Mapping[str, ItemRow]) -> tuple[list[tuple[int, Edit]], list[Override]]:
    """The edits (with their positions) whose target can be edited, and the ones dropped for it."""
    kept: list[tuple[int, Edit]] = []
    dropped: list[Override] = []
    edited: set[str] = set()
    for index, edit in enumerate(plan.edits):
        if edit.op != "add":
            target = handles.get(edit.target or "")
            if target is None:
                dropped.append(Override(action="rejected", reason=f"unknown item handle {edit.target!r}", edit=describe_edit(edit, index)))
                continue
            if edit.op in ("retire", "invalidate") and target.pinned:
                dropped.append(Override(action="rejected", reason=f"{edit.target} is pinned by the user: kept (unpin it to let it go)", edit=describe_edit(edit, index), item_id=target.item_id))
                continue
            if edit.target in edited:
                dropped.append(Override(action="rejected", reason=f"{edit.target} is already edited by this plan", edit=describe_edit(edit, index), item_id=target.item_id))
                continue
            edited.add(edit.target or "")
        kept.append((index, edit))
    return kept, dropped


def _holed(item: ItemRow | Edit) -> bool:
    texts = (item.title, item.text, item.task_group, *item.keywords, *skill_texts(item.skill))
    return any(has_hole(text) for text in texts)


def code_retirements(
    items: Sequence[ItemRow],
    live_evidence: frozenset[UUID],
    matcher: TombstoneMatcher,
    touched: frozenset[UUID],
) -> list[Override]:
    """Items code must retire: all evidence gone, or a forgotten value inside.

    ``live_evidence`` is what may still be evidence: live sessions and the
    notes nobody withdrew. ``touched`` holds items the plan already retires or
    invalidates.
    """
    retirements: list[Override] = []
    for item in items:
        if item.item_id in touched:
            continue
        if item.evidence and not any(e in live_evidence for e in item.evidence):
            retirements.append(
                Override(action="retired", item_id=item.item_id, reason="all evidence is gone (deleted, pruned, polluted or withdrawn)")
            )
            continue
        if matcher.withholds(item, item.scope):
            retirements.append(Override(action="retired", item_id=item.item_id, reason="contains a forgotten value (tombstone)"))
            continue
        if _holed(item):
            retirements.append(Override(action="retired", item_id=item.item_id, reason="its text has a hole where a forgotten value was cut out"))
    return retirements


def carried_notes(note_scopes: Mapping[UUID, str], items: Iterable[tuple[str, Sequence[UUID]]]) -> frozenset[UUID]:
    """The notes an active item of the note's own scope carries as evidence: the notes a run applied.

    ``items`` is every item active once the run's edits are in, as (scope,
    evidence). A note no item of its scope carries was not applied, whatever
    the plan said about it (a global note whose words a project item already
    holds is not served anywhere else): it stays pending for the next run.
    """
    carried: set[UUID] = set()
    for scope, evidence in items:
        carried.update(e for e in evidence if note_scopes.get(e) == scope)
    return frozenset(carried)
