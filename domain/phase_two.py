"""Phase 2: select, ask for a plan, check it, apply it as one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.consolidation import (
    Consolidation,
    LeaseHeld,
    Override,
    PhaseTwoLease,
    SelectedInput,
)
from mnemolog.domain.forgetting import TombstoneMatcher
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.plan import ConsolidationPlan
from mnemolog.domain.plan_checks import CurrentItem, check_plan, code_retirements, droppable_edits
from mnemolog.domain.ports import (
    ConsolidationRequest,
    Consolidator,
    InputForModel,
    ItemForModel,
    ModelError,
    NoteForModel,
)
from mnemolog.domain.selection import Candidate, diff, select


@dataclass(frozen=True)
class SelectedSession:
    """A selected extraction's content, for the model."""

    session_id: UUID
    scope: str
    cwd: str
    updated_at: datetime | None
    rollout_summary: str
    raw_memory: str


class PhaseTwoReads(Protocol):
    """What phase 2 reads from the projections."""

    def candidates(self) -> list[Candidate]:
        """Sessions with a current extraction and their usage."""
        ...

    def selected_sessions(self, ids: Sequence[UUID]) -> dict[UUID, SelectedSession]:
        """Content of the given sessions."""
        ...

    def live_session_ids(self) -> frozenset[UUID]:
        """Sessions that may be evidence (not deleted, pruned, polluted; extraction present)."""
        ...

    def active_items(self) -> list[CurrentItem]:
        """Current memory."""
        ...

    def last_completed_selection(self) -> tuple[SelectedInput, ...]:
        """The selection of the last completed run (empty when none)."""
        ...

    def pending_notes(self) -> list[NoteForModel]:
        """Notes no run has applied yet."""
        ...


@dataclass(frozen=True)
class PhaseTwoPolicy:
    """Selection window and size, and how long a run may hold the lease."""

    retention: timedelta = timedelta(days=30)
    limit: int = 256
    lease: timedelta = timedelta(minutes=30)


@dataclass
class PhaseTwoResult:
    """What one run did."""

    consolidation_id: UUID | None
    status: str  # "completed" | "failed" | "busy"
    detail: str = ""
    added: int = 0
    revised: int = 0
    retired: int = 0
    invalidated: int = 0
    overrides: list[Override] = field(default_factory=list)
    diff_added: int = 0
    diff_changed: int = 0
    diff_removed: int = 0


def _handles(items: Sequence[CurrentItem]) -> dict[str, CurrentItem]:
    ordered = sorted(items, key=lambda i: (i.scope, i.task_group, i.kind, str(i.item_id)))
    return {f"I{n + 1}": item for n, item in enumerate(ordered)}


Scrub = Callable[[str], tuple[str, int]]


def _no_secrets(text: str) -> tuple[str, int]:
    return text, 0


def _redacted(plan: ConsolidationPlan, scrub: Scrub) -> tuple[ConsolidationPlan, int]:
    """The plan with secrets redacted from every text the model wrote (guarantee 5)."""
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        cleaned, found = scrub(text)
        count += found
        return cleaned

    edits = tuple(
        edit.model_copy(
            update={
                "title": clean(edit.title),
                "text": clean(edit.text),
                "task_group": clean(edit.task_group),
                "keywords": tuple(clean(k) for k in edit.keywords),
            }
        )
        for edit in plan.edits
    )
    return plan.model_copy(update={"edits": edits, "user_profile": clean(plan.user_profile)}), count


def consolidate(
    app: MnemologApp,
    reads: PhaseTwoReads,
    consolidator: Consolidator,
    matcher: TombstoneMatcher,
    *,
    now: Callable[[], datetime],
    worker: str,
    policy: PhaseTwoPolicy = PhaseTwoPolicy(),
    scrub: Scrub = _no_secrets,
) -> PhaseTwoResult:
    """Run one consolidation. Exits with status "busy" when another run holds the lease.

    ``scrub`` redacts secrets from what the model wrote before anything is checked or stored.
    """
    selection = select(reads.candidates(), now(), policy.retention, policy.limit)
    previous = reads.last_completed_selection()
    input_diff = diff(previous, selection)
    run = Consolidation(
        selection=selection, previous_selection=previous, diff=input_diff, worker=worker, model=consolidator.name
    )
    lease: PhaseTwoLease | None = app.find(PhaseTwoLease.create_id())
    if lease is None:
        lease = PhaseTwoLease()
    try:
        lease.take(run.id, worker, now(), policy.lease)
        app.save_all(lease, run)
    except LeaseHeld as held:
        return PhaseTwoResult(None, "busy", str(held))
    except IntegrityError:
        return PhaseTwoResult(None, "busy", "another consolidation started at the same moment")

    result = PhaseTwoResult(
        run.id,
        "failed",
        diff_added=len(input_diff.added),
        diff_changed=len(input_diff.changed),
        diff_removed=len(input_diff.removed),
    )
    items = reads.active_items()
    handles = _handles(items)
    sessions = reads.selected_sessions([s.session_id for s in selection])
    notes = reads.pending_notes()
    changed = set(input_diff.added) | set(input_diff.changed)
    request = ConsolidationRequest(
        items=[
            ItemForModel(h, i.kind, i.scope, i.task_group, i.title, i.text, i.keywords, tuple(str(e) for e in i.evidence))
            for h, i in handles.items()
        ],
        inputs=[
            InputForModel(
                session_id=str(s.session_id),
                scope=sessions[s.session_id].scope,
                cwd=sessions[s.session_id].cwd,
                updated_at=sessions[s.session_id].updated_at,
                rollout_summary=sessions[s.session_id].rollout_summary,
                raw_memory=sessions[s.session_id].raw_memory,
                change=("added" if s.session_id in input_diff.added else "changed" if s.session_id in changed else "unchanged"),
            )
            for s in selection
            if s.session_id in sessions
        ],
        removed_sessions=[str(s) for s in input_diff.removed],
        notes=notes,
    )

    def finish_failed(error: str, rejected: tuple[Override, ...] = (), model: str = "", prompt_hash: str = "") -> PhaseTwoResult:
        def command() -> None:
            current_run: Consolidation = app.repository.get(run.id)
            current_lease: PhaseTwoLease = app.repository.get(PhaseTwoLease.create_id())
            current_run.fail(error, rejected, model=model, prompt_hash=prompt_hash)
            current_lease.release(run.id)
            app.save_all(current_run, current_lease)

        app.retrying(command)
        result.detail = error
        result.overrides = list(rejected)
        return result

    try:
        answer = consolidator.consolidate(request)
    except ModelError as error:
        return finish_failed(f"model error: {error}")

    selected_scopes = {sid: s.scope for sid, s in sessions.items()}
    global_notes = frozenset(UUID(n.note_id) for n in notes if n.scope == "global")
    redacted, redactions = _redacted(answer.plan, scrub)
    plan, dropped = droppable_edits(redacted, handles)
    problems = check_plan(
        plan, handles=handles, selected_scopes=selected_scopes, global_note_ids=global_notes, matcher=matcher
    )
    if problems:
        return finish_failed(
            f"the plan broke {len(problems)} rule(s); nothing was applied",
            tuple(problems),
            answer.model,
            answer.prompt_hash,
        )

    stamp = now()
    changed_items: dict[UUID, MemoryItem] = {}
    new_items: list[MemoryItem] = []
    counts = {"added": 0, "revised": 0, "retired": 0, "invalidated": 0}
    for edit in plan.edits:
        evidence = tuple(sorted({UUID(e) for e in edit.evidence if UUID(e) in selected_scopes}, key=str))
        if edit.op == "add":
            new_items.append(
                MemoryItem(
                    kind=edit.kind.value,
                    scope=edit.scope,
                    task_group=edit.task_group,
                    title=edit.title,
                    text=edit.text,
                    keywords=tuple(edit.keywords),
                    evidence=evidence,
                    valid_from=edit.valid_from,
                    consolidation_id=run.id,
                    reason=edit.reason,
                )
            )
            counts["added"] += 1
            continue
        target_id = handles[edit.target or ""].item_id
        item = changed_items.get(target_id) or app.repository.get(target_id)
        changed_items[target_id] = item
        if edit.op == "revise":
            item.revise(
                title=edit.title or item.title,
                text=edit.text or item.text,
                keywords=tuple(edit.keywords) or item.keywords,
                evidence=evidence or item.evidence,
                valid_from=edit.valid_from,
                consolidation_id=run.id,
                reason=edit.reason,
            )
            counts["revised"] += 1
        elif edit.op == "retire" and item.retire(edit.reason, run.id):
            counts["retired"] += 1
        elif edit.op == "invalidate" and item.invalidate(edit.valid_from or stamp, edit.reason, run.id):
            counts["invalidated"] += 1

    touched = frozenset(i for i, it in changed_items.items() if not it.is_active)
    # Judge evidence as the plan left it: a revise may have given an item new evidence.
    after_plan = [
        replace(i, evidence=tuple(changed_items[i.item_id].evidence)) if i.item_id in changed_items else i for i in items
    ]
    overrides = code_retirements(after_plan, reads.live_session_ids(), matcher, touched)
    for override in overrides:
        assert override.item_id is not None
        item = changed_items.get(override.item_id) or app.repository.get(override.item_id)
        changed_items[override.item_id] = item
        if item.retire(override.reason, run.id, by=EditedBy.CODE):
            counts["retired"] += 1

    applied_notes: list[Note] = []
    for note in notes:
        note_aggregate: Note = app.repository.get(UUID(note.note_id))
        note_aggregate.mark_applied(run.id)
        applied_notes.append(note_aggregate)

    run.complete(
        **counts,
        overrides=(*dropped, *overrides),
        model=answer.model,
        prompt_hash=answer.prompt_hash,
        input_tokens=answer.usage.input_tokens,
        output_tokens=answer.usage.output_tokens,
        user_profile=matcher.scrub_everywhere(plan.user_profile)[0],  # read in every project
        redactions=redactions,
        notes_applied=tuple(n.id for n in applied_notes),
    )
    lease.release(run.id)
    try:
        # The edits, the notes, the run's outcome and the lease release: one transaction.
        app.save_all(run, lease, *changed_items.values(), *new_items, *applied_notes)
    except IntegrityError:
        return finish_failed("memory changed while consolidating (e.g. a forget); nothing was applied")
    result.status = "completed"
    result.overrides = [*dropped, *overrides]
    for key, value in counts.items():
        setattr(result, key, value)
    return result
