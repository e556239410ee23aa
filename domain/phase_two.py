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
    InputDiff,
    LeaseHeld,
    Override,
    PhaseTwoLease,
    SelectedInput,
)
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
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher


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

    def failed(error: str, rejected: tuple[Override, ...] = (), model: str = "", prompt_hash: str = "") -> PhaseTwoResult:
        _record_failure(app, run.id, error, rejected, model, prompt_hash)
        result.detail = error
        result.overrides = list(rejected)
        return result

    try:
        answer = consolidator.consolidate(_request(handles, selection, sessions, input_diff, notes))
    except ModelError as error:
        return failed(f"model error: {error}")

    selected_scopes = {sid: s.scope for sid, s in sessions.items()}
    global_notes = frozenset(UUID(n.note_id) for n in notes if n.scope == "global")
    redacted, redactions = _redacted(answer.plan, scrub)
    plan, dropped = droppable_edits(redacted, handles)
    problems = check_plan(
        plan, handles=handles, selected_scopes=selected_scopes, global_note_ids=global_notes, matcher=matcher
    )
    if problems:
        return failed(
            f"the plan broke {len(problems)} rule(s); nothing was applied", tuple(problems), answer.model, answer.prompt_hash
        )

    edits = _Edits(app, run.id)
    edits.apply(plan, handles, frozenset(selected_scopes), now())
    # Judge evidence as the plan left it: a revise may have given an item new evidence.
    after_plan = [
        replace(i, evidence=tuple(edits.changed[i.item_id].evidence)) if i.item_id in edits.changed else i for i in items
    ]
    touched = frozenset(i for i, it in edits.changed.items() if not it.is_active)
    overrides = code_retirements(after_plan, reads.live_session_ids(), matcher, touched)
    for override in overrides:
        assert override.item_id is not None
        if edits.item(override.item_id).retire(override.reason, run.id, by=EditedBy.CODE):
            edits.counts["retired"] += 1

    applied_notes: list[Note] = [app.repository.get(UUID(n.note_id)) for n in notes]
    for note in applied_notes:
        note.mark_applied(run.id)
    run.complete(
        **edits.counts,
        overrides=(*dropped, *overrides),
        model=answer.model,
        prompt_hash=answer.prompt_hash,
        input_tokens=answer.usage.input_tokens,
        output_tokens=answer.usage.output_tokens,
        user_profile=matcher.scrub(plan.user_profile, EVERY_PROJECT)[0],  # read in every project
        redactions=redactions,
        notes_applied=tuple(n.id for n in applied_notes),
    )
    lease.release(run.id)
    try:
        # The edits, the notes, the run's outcome and the lease release: one transaction.
        app.save_all(run, lease, *edits.changed.values(), *edits.new, *applied_notes)
    except IntegrityError:
        return failed("memory changed while consolidating (e.g. a forget); nothing was applied")
    result.status = "completed"
    result.overrides = [*dropped, *overrides]
    for key, value in edits.counts.items():
        setattr(result, key, value)
    return result


def _request(
    handles: dict[str, CurrentItem],
    selection: Sequence[SelectedInput],
    sessions: dict[UUID, SelectedSession],
    input_diff: InputDiff,
    notes: Sequence[NoteForModel],
) -> ConsolidationRequest:
    """What the model sees: items under handles, the selected inputs with their change, removals, notes."""

    def change(session_id: UUID) -> str:
        if session_id in input_diff.added:
            return "added"
        return "changed" if session_id in input_diff.changed else "unchanged"

    return ConsolidationRequest(
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
                change=change(s.session_id),
            )
            for s in selection
            if s.session_id in sessions
        ],
        removed_sessions=[str(s) for s in input_diff.removed],
        notes=notes,
    )


class _Edits:
    """A checked plan turned into pending item events (saved later, in one transaction)."""

    def __init__(self, app: MnemologApp, run_id: UUID) -> None:
        self.app = app
        self.run_id = run_id
        self.changed: dict[UUID, MemoryItem] = {}
        self.new: list[MemoryItem] = []
        self.counts = {"added": 0, "revised": 0, "retired": 0, "invalidated": 0}

    def item(self, item_id: UUID) -> MemoryItem:
        """The item, loaded once per run so every edit of it lands on the same aggregate."""
        if item_id not in self.changed:
            self.changed[item_id] = self.app.repository.get(item_id)
        return self.changed[item_id]

    def apply(self, plan: ConsolidationPlan, handles: dict[str, CurrentItem], selected: frozenset[UUID], stamp: datetime) -> None:
        """Apply every edit of a plan that passed the checks."""
        for edit in plan.edits:
            evidence = tuple(sorted({UUID(e) for e in edit.evidence if UUID(e) in selected}, key=str))
            if edit.op == "add":
                self.new.append(
                    MemoryItem(
                        kind=edit.kind.value,
                        scope=edit.scope,
                        task_group=edit.task_group,
                        title=edit.title,
                        text=edit.text,
                        keywords=tuple(edit.keywords),
                        evidence=evidence,
                        valid_from=edit.valid_from,
                        consolidation_id=self.run_id,
                        reason=edit.reason,
                    )
                )
                self.counts["added"] += 1
                continue
            item = self.item(handles[edit.target or ""].item_id)
            if edit.op == "revise":
                item.revise(
                    title=edit.title or item.title,
                    text=edit.text or item.text,
                    keywords=tuple(edit.keywords) or item.keywords,
                    evidence=evidence or item.evidence,
                    valid_from=edit.valid_from,
                    consolidation_id=self.run_id,
                    reason=edit.reason,
                )
                self.counts["revised"] += 1
            elif edit.op == "retire" and item.retire(edit.reason, self.run_id):
                self.counts["retired"] += 1
            elif edit.op == "invalidate" and item.invalidate(edit.valid_from or stamp, edit.reason, self.run_id):
                self.counts["invalidated"] += 1


def _record_failure(
    app: MnemologApp, run_id: UUID, error: str, rejected: tuple[Override, ...], model: str, prompt_hash: str
) -> None:
    """Record that nothing of the run was applied, and free the lease."""

    def command() -> None:
        run: Consolidation = app.repository.get(run_id)
        lease: PhaseTwoLease = app.repository.get(PhaseTwoLease.create_id())
        run.fail(error, rejected, model=model, prompt_hash=prompt_hash)
        lease.release(run_id)
        app.save_all(run, lease)

    app.retrying(command)
