"""The story of one memory item, read from its own events and the few aggregates they name.

Which sessions it came from, their extractions, every consolidation that
added, revised, invalidated or retired it (text before and after), citations,
tombstones and notes that touched it, and where it stands now. The item's
events name its evidence sessions, its runs and the tombstones that retired
it; each is read by its id, the runs name the notes they applied, and the
views' ``item_citations`` links name its citations: nothing scans the log.
Texts pass through the tombstone matcher: a forgotten value shows as ``[forgotten]``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.consolidation import Consolidation
from mnemolog.domain.history import (
    Citations,
    Cited,
    Citing,
    Extraction,
    ItemChange,
    ItemMatch,
    ItemNow,
    ItemStory,
    ItemText,
    ItemVersion,
    ShownSkill,
    ShownStep,
    StoryNote,
    StoryRun,
    StorySession,
    StorySpan,
    StoryTombstone,
    TimelineEntry,
    Tombstoned,
    TombstoneEvent,
)
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.session import Session
from mnemolog.domain.skill import Skill, skill_texts
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT, TombstoneMatcher, tokens
from mnemolog.projections.log_reader import log_events
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def scrub_all(text: str, matcher: TombstoneMatcher) -> str:
    """``text`` with the values of every active tombstone cut out, whatever their scope."""
    return matcher.scrub(text, EVERY_PROJECT)[0]


@dataclass
class _Text:
    matcher: TombstoneMatcher

    def __call__(self, text: str) -> str:
        return scrub_all(text, self.matcher)

    def maybe(self, text: str | None) -> str | None:
        return None if text is None else scrub_all(text, self.matcher)

    def many(self, values: Iterable[str]) -> tuple[str, ...]:
        return tuple(self(v) for v in values)


def shown_skill(skill: Skill | None, matcher: TombstoneMatcher) -> ShownSkill | None:
    """A skill as explain, audit and show print it, every text through the matcher."""
    if skill is None:
        return None
    return ShownSkill(
        name=scrub_all(skill.name, matcher),
        steps=tuple(ShownStep(scrub_all(s.command, matcher), scrub_all(s.action, matcher)) for s in skill.steps),
        relies_on=tuple(scrub_all(r, matcher) for r in skill.relies_on),
    )


def events_of(app: MnemologApp, aggregate_id: UUID) -> list[Any]:
    """One aggregate's events, oldest first (none for an unknown id)."""
    try:
        return list(app.events.get(aggregate_id))
    except Exception:  # an unknown id has no events
        return []


def readable_in(scope: str, project: str | None) -> bool:
    """Whether a reader in ``project`` may read an item or session of ``scope`` (None: no project, every scope)."""
    return project is None or scope in (GLOBAL_SCOPE, project)


def current_scope(own: list[Any]) -> str:
    """An item's scope as its events leave it (the last event that names one)."""
    return next((e.scope for e in reversed(own) if isinstance(getattr(e, "scope", None), str)), GLOBAL_SCOPE)


@dataclass
class _Words:
    """An item's words as its events leave them (replayed change by change)."""

    title: str = ""
    text: str = ""
    keywords: tuple[str, ...] = ()
    skill: Skill | None = None

    def shown(self, scrub: _Text, matcher: TombstoneMatcher, with_skill: bool = True) -> ItemText:
        skill = shown_skill(self.skill, matcher) if with_skill else None
        return ItemText(scrub(self.title), scrub(self.text), scrub.many(self.keywords), skill)


def _changes(own: list[Any], matcher: TombstoneMatcher) -> tuple[list[ItemChange], list[ItemVersion], _Words | None]:
    """Each of the item's events as a change, the versions its words went through, and its words now."""
    scrub = _Text(matcher)
    changes: list[ItemChange] = []
    versions: list[ItemVersion] = []
    words: _Words | None = None
    for e in own:
        before = None if words is None else _Words(words.title, words.text, words.keywords, words.skill)
        at = _iso(e.timestamp)
        consolidation = getattr(e, "consolidation_id", None)
        common: dict[str, Any] = {
            "at": at,
            "version": e.originator_version,
            "by": getattr(getattr(e, "by", None), "value", None),  # not every event says who
            "reason": scrub.maybe(getattr(e, "reason", None)),
            "consolidation": str(consolidation) if consolidation else None,
        }
        if isinstance(e, (MemoryItem.Added, MemoryItem.Revised)):
            skill = e.skill if e.skill is not None else (words.skill if words else None)
            words = _Words(e.title, e.text, tuple(e.keywords), skill)
            after = words.shown(scrub, matcher)
            changes.append(ItemChange(
                action="added" if isinstance(e, MemoryItem.Added) else "revised",
                after=after,
                before=None if before is None else before.shown(scrub, matcher),
                evidence=tuple(str(s) for s in e.evidence),
                valid_from=_iso(e.valid_from),
                **common,
            ))
            versions.append(ItemVersion(e.originator_version, at, after))
        elif isinstance(e, MemoryItem.Retired):
            changes.append(ItemChange(action="retired", tombstone=str(e.tombstone_id) if e.tombstone_id else None, **common))
        elif isinstance(e, MemoryItem.Invalidated):
            changes.append(ItemChange(action="invalidated", valid_to=_iso(e.valid_to), **common))
        elif isinstance(e, MemoryItem.Rerecorded):  # an erase: earlier texts read [erased], these survive
            words = _Words(e.title, e.text, tuple(e.keywords), e.skill or (words.skill if words else None))
            changes.append(ItemChange(action="re-recorded", after=words.shown(scrub, matcher, with_skill=False), **common))
        elif isinstance(e, MemoryItem.Reviewed):
            changes.append(ItemChange(action="reviewed", verdict=e.verdict.value, reviewer=e.reviewer, note=scrub(e.note), **common))
        elif isinstance(e, MemoryItem.Edited):
            kept = words or _Words()
            words = _Words(e.title, e.text, kept.keywords, kept.skill)
            after = words.shown(scrub, matcher, with_skill=False)
            changes.append(ItemChange(
                action="edited", editor=e.editor, after=after,
                before=None if before is None else before.shown(scrub, matcher, with_skill=False), **common,
            ))
            versions.append(ItemVersion(e.originator_version, at, after))
        elif isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned)):
            changes.append(ItemChange(action="pinned" if isinstance(e, MemoryItem.Pinned) else "unpinned", editor=e.pinner, **common))
        elif isinstance(e, MemoryItem.ScopeChanged):
            changes.append(ItemChange(action="scope changed", editor=e.editor, scope=e.scope, previous=e.previous, **common))
        else:  # pragma: no cover - future event types
            changes.append(ItemChange(action=type(e).__name__.lower(), **common))
    return changes, versions, words


def _session(session_id: UUID, events: list[Any]) -> StorySession:
    """An evidence session as its own events describe it."""
    facts: dict[str, Any] = {}
    extractions: list[Extraction] = []
    state = "enabled"
    for e in events:
        if isinstance(e, (Session.Recorded, Session.Updated)):
            f = e.facts
            facts = {"agent": f.source, "native_id": f.native_id, "path": f.path, "cwd": f.cwd, "scope": f.scope,
                     "started_at": _iso(f.started_at), "updated_at": _iso(f.updated_at)}
        elif isinstance(e, Session.Extracted):
            extractions.append(Extraction(
                at=_iso(e.timestamp), model=e.model, prompt_hash=e.prompt_hash, content_hash=e.content_hash,
                input_tokens=e.input_tokens, output_tokens=e.output_tokens,
            ))
        elif isinstance(e, Session.ExtractedNothing):
            extractions.append(Extraction(at=_iso(e.timestamp), model=e.model, content_hash=e.content_hash, nothing=True))
        elif isinstance(e, Session.ModeChanged):
            state = e.mode.value
        elif isinstance(e, Session.Pruned):
            state = "pruned"
        elif isinstance(e, Session.Deleted):
            state = "deleted"
    return StorySession(session=str(session_id), state=state, extractions=tuple(extractions), **facts)


def _run(run_id: UUID, events: list[Any]) -> StoryRun:
    """What the item's story tells of one of its runs."""
    values: dict[str, Any] = {}
    for e in events:
        if isinstance(e, Consolidation.Started):
            values.update(started_at=_iso(e.timestamp), model=e.model)
        elif isinstance(e, Consolidation.Completed):
            values.update(ended_at=_iso(e.timestamp), status="completed", model=e.model, prompt_hash=e.prompt_hash,
                          notes_applied=tuple(str(n) for n in e.notes_applied))
    return StoryRun(consolidation=str(run_id), **values)


def _tombstone(tombstone_id: UUID, events: list[Any]) -> StoryTombstone:
    return StoryTombstone(str(tombstone_id), tuple(
        TombstoneEvent(_iso(e.timestamp), type(e).__name__.lower(), getattr(e, "where", None)) for e in events  # only Suppressed says where
    ))


def _citations(reads: ViewReads, item_id: UUID) -> tuple[list[Citing], list[Cited]]:
    """The item's citations, from the views' links (oldest recorded first)."""
    rows = reads.query(
        f"SELECT l.recorded_at, c.source, c.citing_session, c.cited_at FROM {table('item_citations')} l "
        f"JOIN {table('citations')} c ON c.id = l.citation_id WHERE l.item_id = ? ORDER BY l.recorded_at, l.citation_id",
        [str(item_id)],
    )
    return (
        [Citing(r["cited_at"], r["source"], r["citing_session"]) for r in rows],
        [Cited(r["recorded_at"], r["source"]) for r in rows],
    )


def explain_item(app: MnemologApp, reads: ViewReads, item_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> ItemStory | None:
    """The item's story, or None when no such item was ever recorded.

    ``project``: the reader's project, as for ``show``: another project's item
    is None, and only evidence sessions of ``project`` are described (the
    others are counted in ``sessions_elsewhere``).
    """
    own = events_of(app, item_id)
    if not own or not isinstance(own[0], MemoryItem.Added):
        return None
    if not readable_in(current_scope(own), project):
        return None
    added: MemoryItem.Added = own[0]
    scrub = _Text(matcher)
    changes, versions, words = _changes(own, matcher)

    evidence: list[UUID] = sorted({s for e in own for s in (getattr(e, "evidence", ()) or ())}, key=str)  # Added and Revised
    evidence_events = {s: events_of(app, s) for s in evidence}
    note_evidence = {s: found for s, found in evidence_events.items() if found and isinstance(found[0], Note.Recorded)}
    described = [_session(s, found) for s, found in evidence_events.items() if found and s not in note_evidence]
    sessions = [s for s in described if readable_in(s.scope or "unknown", project)]
    runs = [_run(r, events_of(app, r)) for r in sorted({e.consolidation_id for e in own if getattr(e, "consolidation_id", None)}, key=str)]
    runs.sort(key=lambda r: r.started_at or "")
    retired_by = sorted({e.tombstone_id for e in own if isinstance(e, MemoryItem.Retired) and e.tombstone_id}, key=str)
    tombstones = [_tombstone(t, events_of(app, t)) for t in retired_by]
    citing, cited = _citations(reads, item_id)
    notes = []
    for note_id, found in note_evidence.items():  # the notes it rests on (a note is evidence, never a session)
        recorded = found[0]
        notes.append(StoryNote(str(note_id), _iso(recorded.timestamp), recorded.intent, scrub(recorded.text)))
    notes.sort(key=lambda n: n.at or "")

    shown = {s.session: s for s in sessions}
    spans: list[Any] = []
    for e in own:  # the spans of the latest version that named them
        if isinstance(e, (MemoryItem.Added, MemoryItem.Rerecorded)) or (isinstance(e, MemoryItem.Revised) and e.spans is not None):
            spans = list(e.spans or ())
    span_list = [  # only in the sessions this reader may see described
        StorySpan(
            session_id=str(s.session_id), native_id=shown[str(s.session_id)].native_id, agent=shown[str(s.session_id)].agent,
            path=shown[str(s.session_id)].path, line=s.line, item=s.item, quote=scrub(s.quote),
        )
        for s in spans
        if str(s.session_id) in shown
    ]
    timeline: list[TimelineEntry] = [*changes, *cited, *(Tombstoned(t.events[0].at, t.tombstone) for t in tombstones if t.events)]
    timeline.sort(key=lambda x: (x.at or "", x.version if isinstance(x, ItemChange) else 0))

    status = "active"
    for e in own:
        if isinstance(e, MemoryItem.Retired):
            status = "retired"
        elif isinstance(e, MemoryItem.Invalidated):
            status = "invalidated"
    valid_to = next((e.valid_to for e in reversed(own) if isinstance(e, MemoryItem.Invalidated)), None)
    trust = next((e.verdict.value for e in reversed(own) if isinstance(e, MemoryItem.Reviewed)), added.trust.value)
    pinned = next((isinstance(e, MemoryItem.Pinned) for e in reversed(own) if isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned))), False)
    now = words or _Words()
    return ItemStory(
        item=str(item_id),
        kind=added.kind,
        scope=current_scope(own),
        task_group=scrub(added.task_group),
        now=ItemNow(
            status=status, trust=trust, pinned=pinned, title=scrub(now.title), text=scrub(now.text), keywords=scrub.many(now.keywords),
            valid_to=_iso(valid_to), version=own[-1].originator_version, skill=shown_skill(now.skill, matcher),
        ),
        versions=tuple(versions),
        history=tuple(changes),
        timeline=tuple(timeline),
        sessions=tuple(sorted(sessions, key=lambda s: s.session)),
        spans=tuple(span_list),
        sessions_elsewhere=len(described) - len(sessions),
        consolidations=tuple(runs),
        citations=Citations(len(citing), max((c.at for c in citing if c.at), default=None), tuple(citing)),
        tombstones=tuple(tombstones),
        notes=tuple(notes),
    )


def find_items(app: MnemologApp, text: str, limit: int = 10, project: str | None = None) -> list[ItemMatch]:
    """Items whose current or past text shares the most words with ``text`` (best first).

    Past texts live only in the log: this one read scans it (``explain WORDS``;
    ``explain ID`` never does). ``project``: only items a reader in that
    project may read (its own and global ones).
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
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))
    return [ItemMatch(str(i), s, len(wanted)) for i, (s, _) in ranked[:limit]]
