"""What one consolidation changed, read from its own events and those of the items it edited.

Inputs added, changed and removed; each item edit with the text before and
after; what code overrode or rejected and why; each planning round (edits
rejected, a plan refused, a model call that failed), the repair round and the
fallback to the offline consolidator; model, prompt hash, tokens. The views
list the runs (``consolidations``) and which items each run edited
(``run_edits``); an audit reads the run's events and each edited item's own
events (its words before an edit are what its earlier events left), never the
whole log.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.consolidation import Consolidation, Override
from mnemolog.domain.history import (
    Fallback,
    Hidden,
    ItemText,
    PlanRound,
    Repair,
    RunAudit,
    RunCounts,
    RunEdit,
    RunInputs,
    RunSummary,
    SelectedShown,
    ShownOverride,
)
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.skill import Skill
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.explain import events_of, readable_in, scrub_all, shown_skill
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _summary(row: dict[str, Any]) -> RunSummary:
    """A run as the views' ``consolidations`` row holds it."""
    completed = row["status"] == "completed"
    return RunSummary(
        consolidation=row["id"],
        status=row["status"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        worker=row["worker"],
        model=row["model"],
        prompt_hash=row["prompt_hash"],
        input_tokens=int(row["input_tokens"] or 0),
        output_tokens=int(row["output_tokens"] or 0),
        counts=RunCounts(int(row["added"]), int(row["revised"]), int(row["retired"]), int(row["invalidated"])) if completed else None,
        error=row["error"],
    )


_RUN_COLUMNS = "id, status, started_at, ended_at, worker, model, prompt_hash, input_tokens, output_tokens, added, revised, retired, invalidated, error"


def list_runs(reads: ViewReads, since: datetime | None = None) -> list[RunSummary]:
    """Every consolidation run (started at or after ``since``), oldest first."""
    rows = reads.query(f"SELECT {_RUN_COLUMNS} FROM {table('consolidations')} ORDER BY started_at, id")
    return [
        _summary(r) for r in rows
        if since is None or (r["started_at"] is not None and datetime.fromisoformat(r["started_at"]) >= since)
    ]


def latest_run(reads: ViewReads) -> UUID | None:
    """The most recently started run."""
    rows = reads.query(f"SELECT id FROM {table('consolidations')} ORDER BY started_at DESC, id DESC LIMIT 1")
    return UUID(rows[0]["id"]) if rows else None


def _run_row(reads: ViewReads, run_id: UUID) -> dict[str, Any] | None:
    rows = reads.query(f"SELECT {_RUN_COLUMNS} FROM {table('consolidations')} WHERE id = ?", [str(run_id)])
    return rows[0] if rows else None


def _edited_items(reads: ViewReads, run_id: UUID) -> list[UUID]:
    rows = reads.query(f"SELECT item_id FROM {table('run_edits')} WHERE consolidation_id = ? ORDER BY item_id", [str(run_id)])
    return [UUID(r["item_id"]) for r in rows]


def _sessions(reads: ViewReads, ids: set[UUID]) -> dict[UUID, tuple[str, str]]:
    """(scope, the agent's own id) of each of these sessions the views hold."""
    if not ids:
        return {}
    wanted = sorted(str(i) for i in ids)
    out: dict[UUID, tuple[str, str]] = {}
    for start in range(0, len(wanted), 500):  # bounded IN lists
        chunk = wanted[start : start + 500]
        rows = reads.query(
            f"SELECT id, scope, native_id FROM {table('sessions')} WHERE id IN ({', '.join('?' for _ in chunk)})", chunk
        )
        out.update({UUID(r["id"]): (r["scope"], r["native_id"]) for r in rows})
    return out


@dataclass(frozen=True)
class _State:
    """An item's words and scope as its events had left them."""

    title: str
    text: str
    keywords: tuple[str, ...]
    scope: str
    kind: str | None
    skill: Skill | None

    def shown(self, matcher: TombstoneMatcher) -> ItemText:
        return ItemText(
            scrub_all(self.title, matcher), scrub_all(self.text, matcher),
            tuple(scrub_all(k, matcher) for k in self.keywords), shown_skill(self.skill, matcher),
        )


_OPS = {"Added": "add", "Revised": "revise", "Retired": "retire", "Invalidated": "invalidate"}


def _edits_of(events: list[Any], run_id: UUID) -> list[tuple[Any, _State | None, _State | None]]:
    """(event, words before, words after) of each of the item's events the run made, replaying the item's events."""
    state: _State | None = None
    out = []
    for e in events:
        before = state
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            state = _State(
                e.title, e.text, tuple(e.keywords),
                getattr(e, "scope", None) or (before.scope if before else GLOBAL_SCOPE),  # Added names it; a revision keeps it
                e.kind if isinstance(e, MemoryItem.Added) else (before.kind if before else None),
                e.skill if e.skill is not None else (before.skill if before else None),
            )
        elif isinstance(e, MemoryItem.Edited) and before is not None:  # a person's edit between runs: later revisions are diffed against it
            state = replace(before, title=e.title, text=e.text)
        elif isinstance(e, MemoryItem.ScopeChanged) and before is not None:
            state = replace(before, scope=e.scope)
        if getattr(e, "consolidation_id", None) == run_id:
            out.append((e, before, state))
    return out


def _override(o: Override, matcher: TombstoneMatcher) -> ShownOverride:
    return ShownOverride(o.action, scrub_all(o.reason, matcher), str(o.item_id) if o.item_id else None, scrub_all(o.edit, matcher))


def audit_run(app: MnemologApp, reads: ViewReads, run_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> RunAudit | None:
    """One run's audit, or None when there is no such run.

    ``project``: scoped like every read: only edits of that project's and
    global items, and only its sessions among the inputs (the rest counted in
    ``hidden``).
    """
    run_events = events_of(app, run_id)
    row = _run_row(reads, run_id)
    if not run_events or not isinstance(run_events[0], Consolidation.Started) or row is None:
        return None
    started: Consolidation.Started = run_events[0]

    made = [edit for item_id in _edited_items(reads, run_id) for edit in _edits_of(events_of(app, item_id), run_id)]
    made.sort(key=lambda m: (m[0].timestamp, str(m[0].originator_id), m[0].originator_version))  # the order the run made them
    edits: list[RunEdit] = []
    hidden_edits = 0
    for e, before, after in made:
        known_words = after or before
        if not readable_in(known_words.scope if known_words else GLOBAL_SCOPE, project):
            hidden_edits += 1
            continue
        op = _OPS.get(type(e).__name__, "other")
        edits.append(RunEdit(
            item=str(e.originator_id),
            op=op,
            by=e.by.value,  # every item event a run makes carries who and why
            reason=scrub_all(e.reason, matcher),
            before=before.shown(matcher) if op != "add" and before is not None else None,
            after=after.shown(matcher) if op in ("add", "revise") and after is not None else None,
            tombstone=str(e.tombstone_id) if isinstance(e, MemoryItem.Retired) and e.tombstone_id else None,
            valid_to=_iso(e.valid_to) if isinstance(e, MemoryItem.Invalidated) else None,
            evidence=tuple(str(s) for s in e.evidence) if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)) else None,
        ))

    overrides: tuple[Override, ...] = ()
    notes: tuple[str, ...] = ()
    user_profile = ""
    rounds: list[PlanRound] = []
    repair: Repair | None = None
    fallback: Fallback | None = None
    for e in run_events[1:]:
        if isinstance(e, (Consolidation.EditsRejected, Consolidation.PlanRefused)):
            refused = isinstance(e, Consolidation.PlanRefused)
            rounds.append(PlanRound(
                round=e.round, model=e.model, proposed=e.proposed, refused=refused,
                reason=scrub_all(e.reason, matcher) if isinstance(e, Consolidation.PlanRefused) else None,
                rejected=tuple(_override(o, matcher) for o in e.rejected),
            ))
        elif isinstance(e, Consolidation.ModelFailed):
            rounds.append(PlanRound(round=e.round, model=e.model, error=scrub_all(e.error, matcher)))
        elif isinstance(e, Consolidation.RepairRequested):
            repair = Repair(e.round, tuple(scrub_all(p, matcher) for p in e.problems))
        elif isinstance(e, Consolidation.FellBack):
            fallback = Fallback(e.consolidator, scrub_all(e.reason, matcher))
        elif isinstance(e, Consolidation.Completed):
            overrides = e.overrides
            notes = tuple(str(n) for n in e.notes_applied)
            user_profile = scrub_all(e.user_profile, matcher)
        elif isinstance(e, Consolidation.Failed):
            overrides = e.rejected

    inputs = {i.session_id for i in started.selection} | set(started.diff.added) | set(started.diff.changed) | set(started.diff.removed)
    known = _sessions(reads, inputs)

    def ours(session_id: UUID) -> bool:
        return readable_in(known[session_id][0] if session_id in known else "unknown", project)

    selected = [s for s in started.selection if ours(s.session_id)]
    summary = _summary(row)
    return RunAudit(
        **{name: getattr(summary, name) for name in RunSummary.__dataclass_fields__},
        inputs=RunInputs(
            selected=tuple(SelectedShown(str(s.session_id), s.rank, s.content_hash) for s in selected),
            added=tuple(str(s) for s in started.diff.added if ours(s)),
            changed=tuple(str(s) for s in started.diff.changed if ours(s)),
            removed=tuple(str(s) for s in started.diff.removed if ours(s)),
        ),
        project=project,
        agent_ids={str(s): known[s][1] for s in sorted(inputs, key=str) if ours(s) and s in known},
        hidden=Hidden(edits=hidden_edits, inputs=len(started.selection) - len(selected)),
        edits=tuple(edits),
        overrides=tuple(_override(o, matcher) for o in overrides),
        notes_applied=notes,
        user_profile=user_profile,
        rounds=tuple(rounds),
        repair=repair,
        fallback=fallback,
    )
