"""The story of one memory item, read only from the log.

Which sessions it came from, their extractions, every consolidation that
added, revised, invalidated or retired it (text before and after), citations,
tombstones and notes that touched it, and where it stands now. Texts pass
through the tombstone matcher: a forgotten value shows as ``[forgotten]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.citation import Citation
from mnemolog.domain.consolidation import Consolidation
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.session import Session
from mnemolog.domain.skill import Skill, skill_texts
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher, tokens
from mnemolog.projections.log_reader import log_events


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def scrub_all(text: str, matcher: TombstoneMatcher) -> str:
    """``text`` with the values of every active tombstone cut out, whatever their scope."""
    return matcher.scrub(text, EVERY_PROJECT)[0]


@dataclass
class _Text:
    matcher: TombstoneMatcher
    scope: str | None

    def __call__(self, text: str | None) -> str | None:
        if text is None:
            return None
        return scrub_all(text, self.matcher)

    def many(self, values: Iterable[str]) -> list[str]:
        return [self(v) or "" for v in values]


def shown_skill(skill: Skill | None, matcher: TombstoneMatcher) -> dict[str, Any] | None:
    """A skill as explain, audit and show print it (JSON-ready), every text through the matcher."""
    if skill is None:
        return None
    return {
        "name": scrub_all(skill.name, matcher),
        "steps": [{"command": scrub_all(s.command, matcher), "action": scrub_all(s.action, matcher)} for s in skill.steps],
        "relies_on": [scrub_all(r, matcher) for r in skill.relies_on],
    }


def _item_events(app: MnemologApp, item_id: UUID) -> list[Any]:
    try:
        return list(app.events.get(item_id))
    except Exception:  # an unknown id has no events
        return []


def readable_in(scope: str, project: str | None) -> bool:
    """Whether a reader in ``project`` may read an item or session of ``scope`` (None: no project, every scope)."""
    return project is None or scope in (GLOBAL_SCOPE, project)


def current_scope(own: list[Any]) -> str:
    """An item's scope as its events leave it (the last event that names one)."""
    return next((e.scope for e in reversed(own) if isinstance(getattr(e, "scope", None), str)), GLOBAL_SCOPE)


def explain_item(app: MnemologApp, item_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> dict[str, Any] | None:
    """The item's story as a JSON-ready dict, or None when no such item was ever recorded.

    ``project``: the reader's project, as for ``show``: another project's item
    is None, and only evidence sessions of ``project`` are described (the
    others are counted in ``sessions_elsewhere``).
    """
    own = _item_events(app, item_id)
    if not own or not isinstance(own[0], MemoryItem.Added):
        return None
    if not readable_in(current_scope(own), project):
        return None
    added: MemoryItem.Added = own[0]
    scrub = _Text(matcher, added.scope)
    consolidation_ids = {e.consolidation_id for e in own if getattr(e, "consolidation_id", None)}
    evidence: set[UUID] = set()
    for e in own:
        evidence.update(getattr(e, "evidence", ()) or ())

    versions: list[dict[str, Any]] = []
    timeline: list[dict[str, Any]] = []
    state: dict[str, Any] = {}
    for e in own:
        before = {k: state.get(k) for k in ("title", "text", "keywords", "skill")} if state else None
        entry: dict[str, Any] = {
            "at": _iso(e.timestamp),
            "version": e.originator_version,
            "by": getattr(getattr(e, "by", None), "value", None),
            "reason": scrub(getattr(e, "reason", None)),
            "consolidation": str(e.consolidation_id) if getattr(e, "consolidation_id", None) else None,
        }
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            skill = e.skill if e.skill is not None else state.get("skill")
            state.update(title=e.title, text=e.text, keywords=list(e.keywords), skill=skill)
            after: dict[str, Any] = {"title": scrub(e.title), "text": scrub(e.text), "keywords": scrub.many(e.keywords)}
            if skill is not None:
                after["skill"] = shown_skill(skill, matcher)
            entry.update(
                action="added" if isinstance(e, MemoryItem.Added) else "revised",
                after=after,
                before=None if before is None else {
                    "title": scrub(before["title"]), "text": scrub(before["text"]), "keywords": scrub.many(before["keywords"] or []),
                    **({"skill": shown_skill(before["skill"], matcher)} if before.get("skill") is not None else {}),
                },
                evidence=[str(s) for s in e.evidence],
                valid_from=_iso(e.valid_from),
            )
            versions.append({"version": e.originator_version, "at": entry["at"], **after})
        elif isinstance(e, MemoryItem.Retired):
            entry.update(action="retired", tombstone=str(e.tombstone_id) if e.tombstone_id else None)
        elif isinstance(e, MemoryItem.Invalidated):
            entry.update(action="invalidated", valid_to=_iso(e.valid_to))
        elif isinstance(e, MemoryItem.Rerecorded):  # an erase: earlier texts read [erased], these survive
            state.update(title=e.title, text=e.text, keywords=list(e.keywords), skill=e.skill or state.get("skill"))
            entry.update(action="re-recorded", after={"title": scrub(e.title), "text": scrub(e.text), "keywords": scrub.many(e.keywords)})
        elif isinstance(e, MemoryItem.Reviewed):
            entry.update(action="reviewed", verdict=e.verdict.value, reviewer=e.reviewer, note=scrub(e.note))
        elif isinstance(e, MemoryItem.Edited):
            after = {"title": scrub(e.title), "text": scrub(e.text), "keywords": scrub.many(state.get("keywords") or [])}
            entry.update(
                action="edited",
                editor=e.editor,
                before=None if before is None else {
                    "title": scrub(before["title"]), "text": scrub(before["text"]), "keywords": scrub.many(before["keywords"] or [])
                },
                after=after,
            )
            state.update(title=e.title, text=e.text)
            versions.append({"version": e.originator_version, "at": entry["at"], **after})
        elif isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned)):
            entry.update(action="pinned" if isinstance(e, MemoryItem.Pinned) else "unpinned", editor=e.pinner)
        elif isinstance(e, MemoryItem.ScopeChanged):
            entry.update(action="scope changed", editor=e.editor, scope=e.scope, previous=e.previous)
        else:  # pragma: no cover - future event types
            entry.update(action=type(e).__name__.lower())
        timeline.append({"kind": "item", **entry})

    sessions: dict[str, dict[str, Any]] = {}
    citations: list[dict[str, Any]] = []
    tombstones: dict[str, dict[str, Any]] = {}
    notes: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    retired_by = {e.tombstone_id for e in own if isinstance(e, MemoryItem.Retired) and e.tombstone_id}
    for _, e in log_events(app):
        origin = e.originator_id
        if isinstance(e, Session.Event) and origin in evidence:
            s = sessions.setdefault(str(origin), {"session": str(origin), "extractions": [], "state": "enabled"})
            if isinstance(e, (Session.Recorded, Session.Updated)):
                f = e.facts
                s.update(
                    agent=f.source, native_id=f.native_id, path=f.path, cwd=f.cwd, scope=f.scope,
                    started_at=_iso(f.started_at), updated_at=_iso(f.updated_at),
                )
            elif isinstance(e, Session.Extracted):
                s["extractions"].append(
                    {"at": _iso(e.timestamp), "model": e.model, "prompt_hash": e.prompt_hash, "content_hash": e.content_hash,
                     "input_tokens": e.input_tokens, "output_tokens": e.output_tokens}
                )
            elif isinstance(e, Session.ExtractedNothing):
                s["extractions"].append({"at": _iso(e.timestamp), "model": e.model, "nothing": True, "content_hash": e.content_hash})
            elif isinstance(e, Session.ModeChanged):
                s["state"] = e.mode.value
            elif isinstance(e, Session.Pruned):
                s["state"] = "pruned"
            elif isinstance(e, Session.Deleted):
                s["state"] = "deleted"
        elif isinstance(e, Citation.Recorded) and item_id in e.item_ids:
            citations.append({"at": _iso(e.cited_at), "source": e.source, "citing_session": e.citing_session})
            timeline.append({"kind": "citation", "at": _iso(e.timestamp), "action": "cited", "source": e.source})
        elif isinstance(e, Tombstone.Event) and (origin in retired_by or (isinstance(e, Tombstone.Suppressed) and e.subject == str(item_id))):
            t = tombstones.setdefault(str(origin), {"tombstone": str(origin), "events": []})
            t["events"].append({"at": _iso(e.timestamp), "event": type(e).__name__.lower(), "where": getattr(e, "where", None)})
        elif isinstance(e, Consolidation.Event) and origin in consolidation_ids:
            r = runs.setdefault(str(origin), {"consolidation": str(origin)})
            if isinstance(e, Consolidation.Started):
                r.update(started_at=_iso(e.timestamp), model=e.model)
            elif isinstance(e, Consolidation.Completed):
                r.update(ended_at=_iso(e.timestamp), status="completed", model=e.model, prompt_hash=e.prompt_hash)
                r["notes_applied"] = [str(n) for n in e.notes_applied]
        elif isinstance(e, Note.Recorded):
            notes.append({"note": str(origin), "at": _iso(e.timestamp), "intent": e.intent, "text": scrub(e.text)})

    elsewhere = [k for k, s in sessions.items() if not readable_in(s.get("scope") or "unknown", project)]
    for key in elsewhere:
        del sessions[key]
    spans: list[Any] = []
    for e in own:  # the spans of the latest version that named them
        if isinstance(e, (MemoryItem.Added, MemoryItem.Rerecorded)) or (isinstance(e, MemoryItem.Revised) and e.spans is not None):
            spans = list(e.spans or ())
    span_list = [  # only in the sessions this reader may see described
        {
            "native_id": sessions[str(s.session_id)].get("native_id"),
            "session_id": str(s.session_id),
            "agent": sessions[str(s.session_id)].get("agent"),
            "path": sessions[str(s.session_id)].get("path"),
            "line": s.line,
            "item": s.item,
            "quote": scrub(s.quote),
        }
        for s in spans
        if str(s.session_id) in sessions
    ]
    applied_notes = {n for r in runs.values() for n in r.get("notes_applied", [])}
    notes = [n for n in notes if n["note"] in applied_notes]
    for t in tombstones.values():
        timeline.append({"kind": "tombstone", "at": t["events"][0]["at"], "action": "tombstone", "tombstone": t["tombstone"]})
    timeline.sort(key=lambda x: (x["at"] or "", x.get("version") or 0))

    final = own[-1]
    status = "active"
    for e in own:
        if isinstance(e, MemoryItem.Retired):
            status = "retired"
        elif isinstance(e, MemoryItem.Invalidated):
            status = "invalidated"
    valid_to = next((e.valid_to for e in reversed(own) if isinstance(e, MemoryItem.Invalidated)), None)
    trust = next((e.verdict.value for e in reversed(own) if isinstance(e, MemoryItem.Reviewed)), added.trust.value)
    scope = current_scope(own)
    pinned = next((isinstance(e, MemoryItem.Pinned) for e in reversed(own) if isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned))), False)
    return {
        "item": str(item_id),
        "kind": added.kind,
        "scope": scope,
        "task_group": scrub(added.task_group),
        "now": {
            "status": status,
            "trust": trust,
            "pinned": pinned,
            "title": scrub(state.get("title")),
            "text": scrub(state.get("text")),
            "keywords": scrub.many(state.get("keywords") or []),
            "valid_to": _iso(valid_to),
            "version": final.originator_version,
            **({"skill": shown_skill(state["skill"], matcher)} if state.get("skill") is not None else {}),  # skills only
        },
        "versions": versions,
        "history": [t for t in timeline if t["kind"] == "item"],
        "timeline": timeline,
        "sessions": [sessions[k] for k in sorted(sessions)],
        "spans": span_list,
        "sessions_elsewhere": len(elsewhere),
        "consolidations": [runs[k] for k in sorted(runs, key=lambda k: runs[k].get("started_at") or "")],
        "citations": {"count": len(citations), "last": max((c["at"] for c in citations if c["at"]), default=None), "list": citations},
        "tombstones": [tombstones[k] for k in sorted(tombstones)],
        "notes": notes,
    }


def find_items(app: MnemologApp, text: str, limit: int = 10, project: str | None = None) -> list[dict[str, Any]]:
    """Items whose current or past text shares the most words with ``text`` (best first).

    ``project``: only items a reader in that project may read (its own and global ones).
    """
    wanted = {t.text for t in tokens(text)}
    if not wanted:
        return []
    best: dict[UUID, tuple[int, str]] = {}
    scopes: dict[UUID, str] = {}
    for _, e in log_events(app):
        scope = getattr(e, "scope", None) if isinstance(e, MemoryItem.Event) else None
        if isinstance(scope, str):
            scopes[e.originator_id] = scope
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            words = {t.text for t in tokens(" ".join([e.title, e.text, " ".join(e.keywords), *skill_texts(e.skill)]))}
            score = len(wanted & words)
            if score and score >= best.get(e.originator_id, (0, ""))[0]:
                best[e.originator_id] = (score, _iso(e.timestamp) or "")
    best = {i: v for i, v in best.items() if readable_in(scopes.get(i, GLOBAL_SCOPE), project)}
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]), reverse=False)
    return [{"item": str(i), "matched_words": s, "of": len(wanted)} for i, (s, _) in ranked[:limit]]
