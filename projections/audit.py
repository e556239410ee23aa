"""What one consolidation changed, read only from the log.

Inputs added, changed and removed; each item edit with the text before and
after; what code overrode or rejected and why; each planning round (edits
rejected, a plan refused, a model call that failed), the repair round and the
fallback to the offline consolidator; model, prompt hash, tokens.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.consolidation import Consolidation
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.session import Session
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.explain import readable_in, scrub_all, shown_skill
from mnemolog.projections.log_reader import log_events


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _run_summary(run_id: UUID, events: list[Any]) -> dict[str, Any]:
    started: Consolidation.Started = events[0]
    out: dict[str, Any] = {
        "consolidation": str(run_id),
        "status": "running",
        "started_at": _iso(started.timestamp),
        "ended_at": None,
        "worker": started.worker,
        "model": started.model,
        "prompt_hash": None,
        "input_tokens": 0,
        "output_tokens": 0,
        "counts": None,
        "error": None,
    }
    for e in events[1:]:
        if isinstance(e, Consolidation.Completed):
            out.update(
                status="completed",
                ended_at=_iso(e.timestamp),
                model=e.model,
                prompt_hash=e.prompt_hash,
                input_tokens=e.input_tokens,
                output_tokens=e.output_tokens,
                counts={"added": e.added, "revised": e.revised, "retired": e.retired, "invalidated": e.invalidated},
            )
        elif isinstance(e, Consolidation.Failed):
            out.update(status="failed", ended_at=_iso(e.timestamp), error=e.error, model=e.model or out["model"], prompt_hash=e.prompt_hash or None)
    return out


def list_runs(app: MnemologApp, since: datetime | None = None) -> list[dict[str, Any]]:
    """Every consolidation run (started at or after ``since``), oldest first."""
    runs: dict[UUID, list[Any]] = {}
    for _, e in log_events(app):
        if isinstance(e, Consolidation.Started):
            if since is None or e.timestamp >= since:
                runs[e.originator_id] = [e]
        elif isinstance(e, Consolidation.Event) and e.originator_id in runs:
            runs[e.originator_id].append(e)
    return [_run_summary(run_id, events) for run_id, events in runs.items()]


def latest_run(app: MnemologApp) -> UUID | None:
    """The most recently started run."""
    latest = None
    for _, e in log_events(app):
        if isinstance(e, Consolidation.Started):
            latest = e.originator_id
    return latest


def audit_run(app: MnemologApp, run_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> dict[str, Any] | None:
    """One run's audit as a JSON-ready dict, or None when there is no such run.

    ``project``: scoped like every read: only edits of that project's and
    global items, and only its sessions among the inputs (the rest counted in
    ``hidden``).
    """
    run_events: list[Any] = []
    session_scopes: dict[UUID, str] = {}
    native_ids: dict[UUID, str] = {}  # the agent's own id of each session (what users see)
    hidden_edits = 0
    items: dict[UUID, dict[str, Any]] = {}  # item state as the log stood before each edit
    edits: list[dict[str, Any]] = []
    for _, e in log_events(app):
        if isinstance(e, Consolidation.Event) and e.originator_id == run_id:
            run_events.append(e)
            continue
        if isinstance(e, Session.Recorded | Session.Updated):
            session_scopes[e.originator_id] = e.facts.scope
            native_ids[e.originator_id] = e.facts.native_id
            continue
        if not isinstance(e, MemoryItem.Event):
            continue
        before = items.get(e.originator_id)
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            scope = getattr(e, "scope", None) or (before or {}).get("scope", "global")
            after = {"title": e.title, "text": e.text, "keywords": list(e.keywords), "scope": scope,
                     "kind": e.kind if isinstance(e, MemoryItem.Added) else (before or {}).get("kind"),
                     "skill": e.skill if e.skill is not None else (before or {}).get("skill")}
            items[e.originator_id] = after
        elif isinstance(e, (MemoryItem.Edited, MemoryItem.ScopeChanged)) and before is not None:
            # A person's edit between runs: later revisions are diffed against it.
            changes = {"title": e.title, "text": e.text} if isinstance(e, MemoryItem.Edited) else {"scope": e.scope}
            after = items[e.originator_id] = {**before, **changes}
        else:
            after = before or {}
        if getattr(e, "consolidation_id", None) != run_id:
            continue
        if not readable_in((after or before or {}).get("scope", "global"), project):
            hidden_edits += 1
            continue
        op = {"Added": "add", "Revised": "revise", "Retired": "retire", "Invalidated": "invalidate"}.get(type(e).__name__, "other")
        edit: dict[str, Any] = {
            "item": str(e.originator_id),
            "op": op,
            "by": cast(Any, e).by.value,  # every item event carries who and why
            "reason": scrub_all(cast(Any, e).reason, matcher),
            "before": _shown(before, matcher) if op != "add" else None,
            "after": _shown(after or None, matcher) if op in ("add", "revise") else None,
        }
        if isinstance(e, MemoryItem.Retired) and e.tombstone_id:
            edit["tombstone"] = str(e.tombstone_id)
        if isinstance(e, MemoryItem.Invalidated):
            edit["valid_to"] = _iso(e.valid_to)
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            edit["evidence"] = [str(s) for s in e.evidence]
        edits.append(edit)
    if not run_events or not isinstance(run_events[0], Consolidation.Started):
        return None
    started: Consolidation.Started = run_events[0]
    summary = _run_summary(run_id, run_events)
    overrides: list[dict[str, Any]] = []
    notes: list[str] = []
    user_profile = ""
    rounds: list[dict[str, Any]] = []
    repair: dict[str, Any] | None = None
    fallback: dict[str, Any] | None = None
    for e in run_events[1:]:
        if isinstance(e, (Consolidation.EditsRejected, Consolidation.PlanRefused)):
            refused = isinstance(e, Consolidation.PlanRefused)
            rounds.append({
                "round": e.round, "model": e.model, "proposed": e.proposed, "refused": refused,
                "reason": scrub_all(e.reason, matcher) if isinstance(e, Consolidation.PlanRefused) else None,
                "rejected": [_scrubbed_override(o.model_dump(mode="json"), matcher) for o in e.rejected],
            })
        elif isinstance(e, Consolidation.ModelFailed):
            rounds.append({"round": e.round, "model": e.model, "error": scrub_all(e.error, matcher), "rejected": []})
        elif isinstance(e, Consolidation.RepairRequested):
            repair = {"round": e.round, "problems": [scrub_all(p, matcher) for p in e.problems]}
        elif isinstance(e, Consolidation.FellBack):
            fallback = {"consolidator": e.consolidator, "reason": scrub_all(e.reason, matcher)}
        elif isinstance(e, Consolidation.Completed):
            overrides = [o.model_dump(mode="json") for o in e.overrides]
            notes = [str(n) for n in e.notes_applied]
            user_profile = scrub_all(e.user_profile, matcher)
        elif isinstance(e, Consolidation.Failed):
            overrides = [o.model_dump(mode="json") for o in e.rejected]
    overrides = [_scrubbed_override(o, matcher) for o in overrides]

    def ours(session_id: UUID) -> bool:
        return readable_in(session_scopes.get(session_id, "unknown"), project)

    selected = [s for s in started.selection if ours(s.session_id)]
    return {
        **summary,
        "inputs": {
            "selected": [{"session": str(s.session_id), "rank": s.rank, "content_hash": s.content_hash} for s in selected],
            "added": [str(s) for s in started.diff.added if ours(s)],
            "changed": [str(s) for s in started.diff.changed if ours(s)],
            "removed": [str(s) for s in started.diff.removed if ours(s)],
        },
        "project": project,
        "agent_ids": {  # the inputs by the agent's own id (the text output shows only these)
            str(s): native_ids[s]
            for s in sorted({i.session_id for i in selected} | set(started.diff.added) | set(started.diff.changed) | set(started.diff.removed), key=str)
            if ours(s) and s in native_ids
        },
        "hidden": {"edits": hidden_edits, "inputs": len(started.selection) - len(selected)},
        "edits": edits,
        "code_retired": [o for o in overrides if o["action"] == "retired"],
        "rejected": [o for o in overrides if o["action"] == "rejected"],
        "overrides": overrides,
        "notes_applied": notes,
        "user_profile": user_profile,
        "rounds": rounds,
        "repair": repair,
        "fallback": fallback,
    }


def _scrubbed_override(override: dict[str, Any], matcher: TombstoneMatcher) -> dict[str, Any]:
    return {**override, "reason": scrub_all(override["reason"], matcher), "edit": scrub_all(override["edit"], matcher)}


def _shown(state: dict[str, Any] | None, matcher: TombstoneMatcher) -> dict[str, Any] | None:
    if state is None:
        return None
    shown: dict[str, Any] = {
        "title": scrub_all(state["title"], matcher),
        "text": scrub_all(state["text"], matcher),
        "keywords": [scrub_all(k, matcher) for k in state["keywords"]],
    }
    if state.get("skill") is not None:  # a skill's steps before and after
        shown["skill"] = shown_skill(state["skill"], matcher)
    return shown
