"""Consolidate (phase 2): select, ask the model for a plan, check it, apply it as one transaction.

One run: record the notes files waiting in the memory folder (when given),
select the extractions in the retention window, take the lease, hand the model
the current items, the selected inputs and the pending notes, redact and check
its plan edit by edit, apply the edits that pass, let code retire what lost its
evidence or carries a forgotten value, mark applied the notes an item of
their own scope now carries (the rest stay pending), and save all of it with
the run's ``Completed`` and the lease release in one transaction.

Imperfect plans: edits that cannot apply (unknown handles, sessions outside
the selection, no evidence) are dropped with their reasons and the rest
applies; a plan with what must never pass (a tombstoned value, a scope
violation) is refused whole. Either way the model gets one repair round: its
plan back with the reasons, and the repaired plan is checked the same way.
When no usable edit remains and a ``fallback`` consolidator (the offline one)
is given, it plans the run from the same inputs. Every step is an event on the
run (``EditsRejected``, ``PlanRefused``, ``RepairRequested``, ``ModelFailed``,
``FellBack``), so ``audit`` shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from mnemolog.domain import fault_points
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.consolidation import (
    Consolidation,
    InputDiff,
    LeaseHeld,
    Override,
    PhaseTwoLease,
    SelectedInput,
)
from mnemolog.domain.evidence_spans import EvidenceSpan, locate_spans
from mnemolog.domain.holes import without_holes
from mnemolog.domain.memory_item import EditedBy, ItemStatus, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.plan import ConsolidationPlan
from mnemolog.domain.plan_checks import ScreenedPlan, carried_notes, code_retirements, screen_plan
from mnemolog.domain.ports import (
    ConsolidationAnswer,
    ConsolidationRequest,
    Consolidator,
    InputForModel,
    ItemForModel,
    ModelError,
    NoteForModel,
    PlanRepair,
    Redactor,
)
from mnemolog.domain.reads import ItemRow, NoteRow, SelectedSession
from mnemolog.domain.selection import diff, retired_by_age, select, why_left
from mnemolog.domain.services.notes import NoteFiles, NoteImport, import_note_files
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import Session
from mnemolog.domain.skill import Skill, map_texts
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher

EVERYTHING = timedelta(days=365_000)  # --all: every extraction, however old


@dataclass(frozen=True)
class ConsolidationPolicy:
    """The selection window and size, and how long a run may hold the lease."""

    retention: timedelta = timedelta(days=30)
    limit: int = 256
    lease: timedelta = timedelta(minutes=30)

    @classmethod
    def window(
        cls, retention_days: float, limit: int, now: datetime, since: datetime | None = None, all_sessions: bool = False
    ) -> ConsolidationPolicy:
        """The policy for ``--since`` / ``--all``: either widens the retention window (a first import)."""
        retention = timedelta(days=retention_days)
        if all_sessions:
            retention = EVERYTHING
        elif since is not None:
            retention = max(retention, now - since)
        return cls(retention=retention, limit=limit)


@dataclass
class ConsolidationReport:
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
    notes_applied: list[UUID] = field(default_factory=list)
    notes_imported: NoteImport | None = None
    retired_items: list[UUID] = field(default_factory=list)  # by the model or by code, this run
    retirements: list[tuple[UUID, str]] = field(default_factory=list)  # the same, each with the reason explain gives
    repaired: bool = False  # the model was given its plan back once
    fallback: str = ""  # why the offline consolidator planned the run ("" when it did not)
    planned_by: str = ""  # the model whose plan was applied

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``consolidate --json`` summary)."""
        return {
            "consolidation": str(self.consolidation_id) if self.consolidation_id else None,
            "status": self.status,
            "detail": self.detail,
            "inputs": {"added": self.diff_added, "changed": self.diff_changed, "removed": self.diff_removed},
            "items": {"added": self.added, "revised": self.revised, "retired": self.retired, "invalidated": self.invalidated},
            "overrides": [o.model_dump(mode="json") for o in self.overrides],
            "notes_applied": [str(n) for n in self.notes_applied],
            "notes_files": self.notes_imported.as_dict() if self.notes_imported is not None else None,
            "retired_items": [str(i) for i in self.retired_items],
            "retirements": [{"item": str(i), "reason": reason} for i, reason in self.retirements],
            "repair_round": self.repaired,
            "fallback": self.fallback or None,
            "planned_by": self.planned_by or None,
        }


def consolidate(
    uow: UnitOfWork,
    consolidator: Consolidator,
    redactor: Redactor,
    policy: ConsolidationPolicy = ConsolidationPolicy(),
    *,
    note_files: NoteFiles | None = None,
    worker: str | None = None,
    fallback: Consolidator | None = None,
) -> ConsolidationReport:
    """Run one consolidation; status "busy" when another run holds the lease.

    ``note_files`` (Codex's ``extensions/ad_hoc/notes/*.md``) are recorded as
    notes first, so this run applies them. ``redactor`` cuts secrets out of
    everything the model wrote before anything is checked or stored.
    ``fallback`` (the offline consolidator) plans the run when the model's
    plans leave no usable edit, even after the repair round.
    """
    imported = import_note_files(uow, note_files, redactor) if note_files is not None else None
    app, now = uow.app, uow.clock
    worker = worker or uow.workers.name()
    reads = uow.reads()
    matcher = uow.matcher()
    candidates = reads.candidates()
    selection = select(candidates, now(), policy.retention, policy.limit)
    previous = reads.last_completed_selection()
    input_diff = diff(previous, selection)
    run = Consolidation(
        selection=selection, previous_selection=previous, diff=input_diff, worker=worker, model=consolidator.name
    )
    lease: PhaseTwoLease | None = app.find(PhaseTwoLease.create_id())
    if lease is None:
        lease = PhaseTwoLease()
    try:
        lease.take(run.id, worker, now(), policy.lease, alive=uow.workers.alive)
        app.save_all(lease, run)
    except LeaseHeld as held:
        return ConsolidationReport(None, "busy", str(held), notes_imported=imported)
    except IntegrityError:
        return ConsolidationReport(None, "busy", "another consolidation started at the same moment", notes_imported=imported)
    fault_points.reached("lease")

    report = ConsolidationReport(
        run.id,
        "failed",
        diff_added=len(input_diff.added),
        diff_changed=len(input_diff.changed),
        diff_removed=len(input_diff.removed),
        notes_imported=imported,
    )
    items = reads.active_items()
    handles = _handles(items)
    sessions = reads.selected_sessions([s.session_id for s in selection])
    notes = reads.pending_notes()

    facts = _RunFacts()

    def failed(error: str, rejected: tuple[Override, ...] = (), model: str = "", prompt_hash: str = "") -> ConsolidationReport:
        _record_failure(app, run.id, error, rejected, model, prompt_hash, facts)
        report.detail = error
        report.overrides = list(rejected)
        return report

    request = _request(handles, selection, sessions, input_diff, notes)
    selected_scopes = {sid: s.scope for sid, s in sessions.items()}
    note_scopes = {n.note_id: n.scope for n in notes}

    def checked(answer: ConsolidationAnswer, round: int) -> _Checked:
        redacted, found = _redacted(answer.plan, redactor)
        screened = screen_plan(
            redacted, handles=handles, selected_scopes=selected_scopes, note_scopes=note_scopes, matcher=matcher
        )
        facts.screened(round, len(answer.plan.edits), screened, answer)
        return _Checked(answer, screened, found)

    outcome = _plan_with_repair(consolidator, request, checked, facts, matcher)
    chosen = outcome.chosen
    report.repaired = outcome.repaired
    if chosen is None and fallback is not None:
        offline, reason = fallback, outcome.why_unusable()
        facts.add(lambda r: r.fall_back(reason, offline.name))
        report.fallback = reason
        try:
            chosen = checked(offline.consolidate(request), outcome.rounds + 1)
        except ModelError as error:
            return failed(f"{reason}; the offline consolidator failed too: {error}")
        if chosen.screened.refused:
            return failed(
                f"{reason}; the offline consolidator's plan was refused too; nothing was applied",
                chosen.screened.refusals, chosen.answer.model, chosen.answer.prompt_hash,
            )
    elif chosen is None:
        last = outcome.last
        if last is None:
            return failed(outcome.why_unusable())
        if last.screened.refused:
            return failed(
                f"the plan broke {len(last.screened.refusals)} rule(s) that must never pass; nothing was applied",
                last.screened.rejected, last.answer.model, last.answer.prompt_hash,
            )
        chosen = last  # every edit was dropped: nothing to apply, the reasons are recorded
    answer, plan, dropped, redactions = chosen.answer, chosen.screened.plan, list(chosen.screened.dropped), chosen.redactions
    report.planned_by = answer.model

    edits = _Edits(app, run.id, why_left(candidates, selection, now(), policy.retention))
    edits.apply(plan, handles, frozenset(selected_scopes) | frozenset(note_scopes), now())
    # Judge evidence as the plan left it: a revise may have given an item new evidence.
    after_plan = [
        replace(i, evidence=tuple(edits.changed[i.item_id].evidence)) if i.item_id in edits.changed else i for i in items
    ]
    touched = frozenset(i for i, it in edits.changed.items() if not it.is_active)
    live_evidence = reads.live_session_ids() | reads.live_note_ids()  # a withdrawn note is evidence no more
    overrides = code_retirements(after_plan, live_evidence, matcher, touched)
    for override in overrides:
        assert override.item_id is not None
        if edits.item(override.item_id).retire(override.reason, run.id, by=EditedBy.CODE):
            edits.counts["retired"] += 1
            edits.why_retired[override.item_id] = override.reason

    standing = [
        *((i.scope, i.evidence) for i in items if i.item_id not in edits.changed),
        *((it.scope, it.evidence) for it in (*edits.changed.values(), *edits.new) if it.is_active),
    ]
    carried = carried_notes(note_scopes, standing)
    applied_notes: list[Note] = [app.repository.get(n.note_id) for n in notes if n.note_id in carried]
    facts.record(run)
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
        return failed("memory changed while consolidating (e.g. a forget or a withdrawn note); nothing was applied")
    report.status = "completed"
    report.overrides = [*dropped, *overrides]
    report.notes_applied = [n.id for n in applied_notes]
    report.retired_items = sorted((i for i, it in edits.changed.items() if it.status is ItemStatus.RETIRED), key=str)
    report.retirements = [(i, edits.why_retired.get(i, "")) for i in report.retired_items]
    for key, value in edits.counts.items():
        setattr(report, key, value)
    return report


@dataclass(frozen=True)
class _Checked:
    """One answer, redacted and screened."""

    answer: ConsolidationAnswer
    screened: ScreenedPlan
    redactions: int


class _RunFacts:
    """What the run learnt while planning, recorded on the run once it ends (applied or failed)."""

    def __init__(self) -> None:
        self._facts: list[Callable[[Consolidation], None]] = []

    def add(self, fact: Callable[[Consolidation], None]) -> None:
        """Remember one fact to record."""
        self._facts.append(fact)

    def screened(self, round: int, proposed: int, screened: ScreenedPlan, answer: ConsolidationAnswer) -> None:
        """What code turned down in one round's plan (nothing when every edit passed)."""
        model, prompt_hash = answer.model, answer.prompt_hash
        if screened.refused:
            reason = screened.refusals[0].reason
            rejected = screened.rejected
            self.add(lambda r: r.refuse_plan(round, proposed, reason, rejected, model, prompt_hash))
        elif screened.dropped:
            dropped = screened.dropped
            self.add(lambda r: r.reject_edits(round, proposed, dropped, model, prompt_hash))

    def record(self, run: Consolidation) -> None:
        """Trigger every fact on ``run``."""
        for fact in self._facts:
            fact(run)


@dataclass
class _Planning:
    """The model's rounds: the plan chosen (None: nothing usable) and why."""

    chosen: _Checked | None = None
    last: _Checked | None = None
    rounds: int = 0
    repaired: bool = False
    errors: list[str] = field(default_factory=list)

    def why_unusable(self) -> str:
        """Why no plan of the model's can be applied, value-free."""
        if self.last is None:
            return "model error: " + "; ".join(self.errors) if self.errors else "the model gave no plan"
        screened = self.last.screened
        if screened.refused:
            return f"the plan was refused: {screened.refusals[0].reason}"
        if screened.dropped:
            return f"no usable edit: all {len(screened.dropped)} edit(s) of the plan were rejected"
        return "no usable edit: the repaired plan was empty"


def _plan_with_repair(
    consolidator: Consolidator,
    request: ConsolidationRequest,
    checked: Callable[[ConsolidationAnswer, int], _Checked],
    facts: _RunFacts,
    matcher: TombstoneMatcher,
) -> _Planning:
    """Ask the model; when code turned edits down, hand the plan back once with the reasons.

    A clean first plan (even an empty one: nothing to change) is taken as is;
    else the repaired plan when it has a usable edit, else the first one when
    it has; else none (``chosen`` is None).
    """
    planning = _Planning()
    attempts: list[_Checked] = []
    current = request
    for round in (1, 2):
        planning.rounds = round
        try:
            answer = consolidator.consolidate(current)
        except ModelError as error:
            planning.errors.append(str(error))
            message = str(error)
            facts.add(partial(_model_failed, round=round, error=message, model=consolidator.name))
            if round == 1:
                return planning  # no plan to repair
            break
        result = checked(answer, round)
        attempts.append(result)
        planning.last = result
        if result.screened.clean:
            break
        if round == 2:
            break
        problems = tuple(f"{o.edit}: {o.reason}" for o in result.screened.rejected)
        facts.add(partial(_repair_requested, problems=problems))
        planning.repaired = True
        current = replace(request, repair=PlanRepair(plan=_scrubbed(result.answer.plan, matcher), problems=problems))
    usable = [a for a in reversed(attempts) if a.screened.usable]
    if attempts and attempts[0].screened.clean:
        planning.chosen = attempts[0]  # even an empty plan: nothing to change
    elif usable:
        planning.chosen = usable[0]
    return planning


def _model_failed(run: Consolidation, *, round: int, error: str, model: str) -> None:
    run.model_failed(round, error, model)


def _repair_requested(run: Consolidation, *, problems: tuple[str, ...]) -> None:
    run.request_repair(2, problems)


def _scrubbed(plan: ConsolidationPlan, matcher: TombstoneMatcher) -> ConsolidationPlan:
    """The plan with tombstoned values cut out, to hand back to the model (it never sees a forgotten value)."""

    def clean(text: str, scope: str | None) -> str:
        return matcher.scrub(text, scope)[0]

    edits = tuple(
        edit.model_copy(
            update={
                "title": clean(edit.title, edit.scope),
                "text": clean(edit.text, edit.scope),
                "task_group": clean(edit.task_group, edit.scope),
                "keywords": tuple(clean(k, edit.scope) for k in edit.keywords),
                "skill": map_texts(edit.skill, partial(clean, scope=edit.scope)),
            }
        )
        for edit in plan.edits
    )
    return plan.model_copy(update={"edits": edits, "user_profile": clean(plan.user_profile, EVERY_PROJECT)})


def _handles(items: Sequence[ItemRow]) -> dict[str, ItemRow]:
    """Short handles (I1, I2, ...) the model names items by, in a stable order."""
    ordered = sorted(items, key=lambda i: (i.scope, i.task_group, i.kind, str(i.item_id)))
    return {f"I{n + 1}": item for n, item in enumerate(ordered)}


def _redacted(plan: ConsolidationPlan, redactor: Redactor) -> tuple[ConsolidationPlan, int]:
    """The plan with secrets redacted from every text the model wrote (guarantee 5)."""
    count = 0

    def clean(text: str) -> str:
        nonlocal count
        cleaned, found = redactor.redact(text)
        count += found
        return cleaned

    edits = tuple(
        edit.model_copy(
            update={
                "title": clean(edit.title),
                "text": clean(edit.text),
                "task_group": clean(edit.task_group),
                "keywords": tuple(clean(k) for k in edit.keywords),
                "skill": map_texts(edit.skill, clean),
            }
        )
        for edit in plan.edits
    )
    return plan.model_copy(update={"edits": edits, "user_profile": clean(plan.user_profile)}), count


def _request(
    handles: dict[str, ItemRow],
    selection: Sequence[SelectedInput],
    sessions: dict[UUID, SelectedSession],
    input_diff: InputDiff,
    notes: Sequence[NoteRow],
) -> ConsolidationRequest:
    """What the model sees: items under handles, the selected inputs with their change, removals, notes."""

    def change(session_id: UUID) -> str:
        if session_id in input_diff.added:
            return "added"
        return "changed" if session_id in input_diff.changed else "unchanged"

    return ConsolidationRequest(
        items=[
            ItemForModel(
                h, i.kind, i.scope, i.task_group, i.title, i.text, i.keywords, tuple(str(e) for e in i.evidence), i.skill,
                i.edited_by_user,
            )
            for h, i in handles.items()
        ],
        inputs=[
            InputForModel(
                session_id=str(s.session_id),
                scope=sessions[s.session_id].scope,
                cwd=sessions[s.session_id].cwd,
                updated_at=sessions[s.session_id].updated_at,
                rollout_summary=without_holes(sessions[s.session_id].rollout_summary),  # cut text teaches nothing
                raw_memory=without_holes(sessions[s.session_id].raw_memory),
                change=change(s.session_id),
            )
            for s in selection
            if s.session_id in sessions
        ],
        removed_sessions=[str(s) for s in input_diff.removed],
        notes=[NoteForModel(str(n.note_id), n.intent, n.scope, without_holes(n.text)) for n in notes],
    )


def _spanned(text: str, skill: Skill | None) -> str:
    """What evidence spans are looked for by: the text, and a skill's commands (the lines that ran them)."""
    return " ".join([text, *skill.commands]) if skill is not None else text


SPANS_PER_SESSION = 2
SPANS_PER_ITEM = 4


class _Edits:
    """A checked plan turned into pending item events (saved later, in one transaction)."""

    def __init__(self, app: MnemologApp, run_id: UUID, left: dict[UUID, str] | None = None) -> None:
        self.app = app
        self.run_id = run_id
        self.left = left or {}  # the live sessions not selected, and why (``selection.why_left``)
        self.why_retired: dict[UUID, str] = {}  # the reason each item retired by this run carries
        self.changed: dict[UUID, MemoryItem] = {}
        self.new: list[MemoryItem] = []
        self.counts = {"added": 0, "revised": 0, "retired": 0, "invalidated": 0}
        self._sessions: dict[UUID, Session | None] = {}

    def spans(self, title: str, text: str, keywords: Sequence[str], evidence: Sequence[UUID]) -> tuple[EvidenceSpan, ...]:
        """Line-level evidence for an edit: the lines of its evidence sessions that best support it (notes have none).

        The item's own words first: a span quotes what the item says (the
        user's words, the command and its result); its title and keywords
        only find lines when its text finds none in that session.
        """
        found: list[EvidenceSpan] = []
        for session_id in evidence:
            if session_id not in self._sessions:
                loaded = self.app.find(session_id)
                self._sessions[session_id] = loaded if isinstance(loaded, Session) else None
            session = self._sessions[session_id]
            if session is not None:
                spans = locate_spans(text, session_id, session.transcript, SPANS_PER_SESSION)
                found.extend(spans or locate_spans(" ".join([title, text, *keywords]), session_id, session.transcript, SPANS_PER_SESSION))
        return tuple(found[:SPANS_PER_ITEM])

    def item(self, item_id: UUID) -> MemoryItem:
        """The item, loaded once per run so every edit of it lands on the same aggregate."""
        if item_id not in self.changed:
            self.changed[item_id] = self.app.repository.get(item_id)
        return self.changed[item_id]

    def apply(self, plan: ConsolidationPlan, handles: dict[str, ItemRow], citable: frozenset[UUID], stamp: datetime) -> None:
        """Apply every edit of a plan that passed the checks.

        ``citable`` is the selected sessions and the pending notes; a revise may
        also keep evidence its item already has.
        """
        for edit in plan.edits:
            target = handles.get(edit.target or "") if edit.op != "add" else None
            allowed = citable | frozenset(target.evidence) if target is not None else citable
            evidence = tuple(sorted({UUID(e.strip()) for e in edit.evidence if UUID(e.strip()) in allowed}, key=str))
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
                        spans=self.spans(edit.title, _spanned(edit.text, edit.skill), edit.keywords, evidence),
                        skill=edit.skill if edit.kind.value == "skill" else None,
                    )
                )
                self.counts["added"] += 1
                continue
            assert target is not None  # screen_plan dropped edits of unknown handles
            item = self.item(target.item_id)
            if edit.op == "revise":
                title, text = edit.title or item.title, edit.text or item.text
                keywords, kept = tuple(edit.keywords) or item.keywords, evidence or item.evidence
                skill = edit.skill if item.kind == "skill" else None
                current = getattr(item, "skill", None)
                if skill is not None and current is not None:
                    skill = skill.model_copy(update={"name": current.name})  # a skill's name (its folder) is fixed
                item.revise(
                    title=title,
                    text=text,
                    keywords=keywords,
                    evidence=kept,
                    valid_from=edit.valid_from,
                    consolidation_id=self.run_id,
                    reason=edit.reason,
                    spans=self.spans(title, _spanned(text, skill or getattr(item, "skill", None)), keywords, kept),
                    skill=skill,
                )
                self.counts["revised"] += 1
            elif edit.op == "retire" and item.retire(why := retired_by_age(target.evidence, self.left) or edit.reason, self.run_id):
                self.counts["retired"] += 1
                self.why_retired[item.id] = why
            elif edit.op == "invalidate" and item.invalidate(edit.valid_from or stamp, edit.reason, self.run_id):
                self.counts["invalidated"] += 1


def _record_failure(
    app: MnemologApp,
    run_id: UUID,
    error: str,
    rejected: tuple[Override, ...],
    model: str,
    prompt_hash: str,
    facts: _RunFacts | None = None,
) -> None:
    """Record what the run learnt and that nothing of it was applied, and free the lease."""

    def command() -> None:
        run: Consolidation = app.repository.get(run_id)
        lease: PhaseTwoLease = app.repository.get(PhaseTwoLease.create_id())
        if facts is not None:
            facts.record(run)
        run.fail(error, rejected, model=model, prompt_hash=prompt_hash)
        lease.release(run_id)
        app.save_all(run, lease)

    app.retrying(command)
