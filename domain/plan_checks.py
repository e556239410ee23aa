"""Code checks a consolidation plan before anything is stored.

A plan that breaks a rule is rejected whole. Separately, code retires items the
model kept although all their evidence is gone, or that carry a forgotten value.

Evidence is sessions and notes: a plan may cite a selected session, or a
pending note of the item's own scope (a project note for that project's items,
a global note for global items); a revise may keep evidence its item already
has. An item's evidence stands while a session is live or a note is not
withdrawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from uuid import UUID

from mnemolog.domain.consolidation import Override
from mnemolog.domain.holes import has_hole
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.reads import ItemRow
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


def check_plan(
    plan: ConsolidationPlan,
    *,
    handles: Mapping[str, ItemRow],
    selected_scopes: Mapping[UUID, str],
    note_scopes: Mapping[UUID, str],
    matcher: TombstoneMatcher,
) -> list[Override]:
    """Every rule the plan breaks (empty when it may be applied).

    Rules: targets are known handles; add/revise name evidence, each a selected
    session, a pending note (``note_scopes``: note id -> scope) or, for a
    revise, evidence the item already has; a note is evidence only for an item
    of its own scope; a project item needs evidence from that project (a
    session or a note); a global item needs evidence from more than one
    project, a global note, or is a user preference; no text carries a
    tombstoned value.
    """
    problems: list[Override] = []

    def reject(index: int, edit: Edit, reason: str, item_id: UUID | None = None) -> None:
        problems.append(Override(action="rejected", reason=reason, edit=describe_edit(edit, index), item_id=item_id))

    for index, edit in enumerate(plan.edits):
        target = handles.get(edit.target or "") if edit.target else None
        if edit.op != "add" and target is None:
            continue  # dropped on its own by droppable_edits
        if edit.op in ("retire", "invalidate"):
            continue
        ids, bad = _parse_ids(edit.evidence)
        already = set(target.evidence) if (target is not None and edit.op == "revise") else set()
        notes = [i for i in ids if i in note_scopes]
        kept = [i for i in ids if i not in note_scopes and i not in selected_scopes and i in already]
        sessions = [i for i in ids if i not in note_scopes and i not in kept]
        unknown = [str(i) for i in sessions if i not in selected_scopes] + bad
        if unknown:
            reject(index, edit, "evidence names sessions that were not selected: " + ", ".join(sorted(unknown)))
            continue
        if not ids:
            reject(index, edit, "no evidence")
            continue
        scope = target.scope if (target is not None and edit.op == "revise") else edit.scope
        foreign = sorted(str(n) for n in notes if note_scopes[n] != scope)
        if foreign:
            reject(index, edit, f"notes of another scope are no evidence for an item of scope {scope}: " + ", ".join(foreign))
            continue
        evidence_scopes = {selected_scopes[i] for i in sessions}
        if scope != GLOBAL_SCOPE and not (scope in evidence_scopes or notes or kept):
            reject(index, edit, f"scope {scope} is not covered by its evidence (from {', '.join(sorted(evidence_scopes)) or 'notes only'})")
            continue
        if scope == GLOBAL_SCOPE and not (
            len(evidence_scopes) > 1 or notes or kept or edit.kind == ItemKindName.PREFERENCE
        ):
            reject(index, edit, "a global item needs evidence from more than one project or an explicit user statement")
            continue
        if matcher.withholds(edit, scope):
            reject(index, edit, "the edit contains a forgotten value (tombstone)")
    return problems


def droppable_edits(plan: ConsolidationPlan, handles: Mapping[str, ItemRow]) -> tuple[ConsolidationPlan, list[Override]]:
    """Edits code drops one by one while the rest of the plan still applies.

    An edit whose target handle names no current item, or a second edit of an
    item the plan already edits, cannot be applied, but says nothing against
    the plan's other edits (unlike evidence or scope violations, which reject
    the whole plan).
    """
    kept: list[Edit] = []
    dropped: list[Override] = []
    edited: set[str] = set()
    for index, edit in enumerate(plan.edits):
        if edit.op != "add":
            target = handles.get(edit.target or "")
            if target is None:
                dropped.append(Override(action="rejected", reason=f"unknown item handle {edit.target!r}", edit=describe_edit(edit, index)))
                continue
            if edit.target in edited:
                dropped.append(Override(action="rejected", reason=f"{edit.target} is already edited by this plan", edit=describe_edit(edit, index), item_id=target.item_id))
                continue
            edited.add(edit.target or "")
        kept.append(edit)
    return plan.model_copy(update={"edits": tuple(kept)}), dropped


def _holed(item: ItemRow | Edit) -> bool:
    return any(has_hole(text) for text in (item.title, item.text, item.task_group, *item.keywords))


def holed_edits(plan: ConsolidationPlan, handles: Mapping[str, ItemRow]) -> tuple[ConsolidationPlan, list[Override]]:
    """Adds and revises that carry a hole where a forgotten value was cut out: dropped one by one.

    Such an edit would bring a placeholder back into memory ("use [forgotten]
    for tests"); the rest of the plan still applies.
    """
    kept: list[Edit] = []
    dropped: list[Override] = []
    for index, edit in enumerate(plan.edits):
        if edit.op in ("add", "revise") and _holed(edit):
            target = handles.get(edit.target or "")
            dropped.append(
                Override(
                    action="rejected",
                    reason="the edit carries text cut out by a tombstone (a placeholder, not memory)",
                    edit=describe_edit(edit, index),
                    item_id=target.item_id if target is not None else None,
                )
            )
            continue
        kept.append(edit)
    return plan.model_copy(update={"edits": tuple(kept)}), dropped


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
