"""The history port: what the log tells about one item, one run, or a past moment, as typed results.

``explain`` (one item's story), ``audit`` (one consolidation's edits and
overrides), the runs, memory as it stood at a time (transaction time) or as
valid at a time (valid time), and the transcript entries an item's words come
from. ``projections.history`` implements it over the log and the views: an
item's story reads that item's events and the few aggregates they name, never
the whole log. Every text in a result has passed the tombstone matcher.

Each result's ``as_dict()`` is the JSON the CLI prints with ``--json``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

if TYPE_CHECKING:
    from mnemolog.domain.reads import ItemRow
    from mnemolog.domain.tombstone_matcher import TombstoneMatcher


@dataclass(frozen=True)
class ShownStep:
    """One step of a skill as shown."""

    command: str
    action: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"command": self.command, "action": self.action}


@dataclass(frozen=True)
class ShownSkill:
    """A skill's name, steps and what it relies on, as shown."""

    name: str
    steps: tuple[ShownStep, ...]
    relies_on: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"name": self.name, "steps": [s.as_dict() for s in self.steps], "relies_on": list(self.relies_on)}


@dataclass(frozen=True)
class ItemText:
    """An item's words at one moment (before or after a change)."""

    title: str
    text: str
    keywords: tuple[str, ...]
    skill: ShownSkill | None = None  # skills only

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``skill`` only for skills)."""
        out: dict[str, Any] = {"title": self.title, "text": self.text, "keywords": list(self.keywords)}
        if self.skill is not None:
            out["skill"] = self.skill.as_dict()
        return out


def _opt(value: ItemText | None) -> dict[str, Any] | None:
    return None if value is None else value.as_dict()


# The fields each kind of item change carries in its JSON, beside the common ones.
_CHANGE_FIELDS: dict[str, tuple[str, ...]] = {
    "added": ("after", "before", "evidence", "valid_from"),
    "revised": ("after", "before", "evidence", "valid_from"),
    "retired": ("tombstone",),
    "invalidated": ("valid_to",),
    "re-recorded": ("after",),
    "reviewed": ("verdict", "reviewer", "note"),
    "edited": ("editor", "before", "after"),
    "pinned": ("editor",),
    "unpinned": ("editor",),
    "scope changed": ("editor", "scope", "previous"),
}


@dataclass(frozen=True)
class ItemChange:
    """One event of the item's own history."""

    at: str | None
    version: int
    action: str  # added | revised | retired | invalidated | re-recorded | reviewed | edited | pinned | unpinned | scope changed
    by: str | None = None  # model | code | user
    reason: str | None = None
    consolidation: str | None = None  # the run that made the change
    before: ItemText | None = None
    after: ItemText | None = None
    evidence: tuple[str, ...] = ()
    valid_from: str | None = None
    valid_to: str | None = None
    tombstone: str | None = None
    verdict: str | None = None
    reviewer: str | None = None
    note: str | None = None
    editor: str | None = None
    scope: str | None = None
    previous: str | None = None

    @property
    def kind(self) -> str:
        """What the timeline entry is about: the item itself."""
        return "item"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the common fields and those of its action."""
        out: dict[str, Any] = {
            "kind": "item", "at": self.at, "version": self.version, "by": self.by, "reason": self.reason,
            "consolidation": self.consolidation, "action": self.action,
        }
        for name in _CHANGE_FIELDS.get(self.action, ()):
            value = getattr(self, name)
            out[name] = _opt(value) if name in ("before", "after") else list(value) if name == "evidence" else value
        return out


@dataclass(frozen=True)
class Cited:
    """An agent cited the item (a timeline entry)."""

    at: str | None  # when the citation was recorded
    source: str

    kind = "citation"
    action = "cited"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"kind": self.kind, "at": self.at, "action": self.action, "source": self.source}


@dataclass(frozen=True)
class Tombstoned:
    """A tombstone that concerns the item (a timeline entry; the value is never shown)."""

    at: str | None
    tombstone: str

    kind = "tombstone"
    action = "tombstone"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"kind": self.kind, "at": self.at, "action": self.action, "tombstone": self.tombstone}


TimelineEntry = ItemChange | Cited | Tombstoned


@dataclass(frozen=True)
class ItemVersion:
    """The item's words as one version left them."""

    version: int
    at: str | None
    text: ItemText

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"version": self.version, "at": self.at, **self.text.as_dict()}


@dataclass(frozen=True)
class ItemNow:
    """Where the item stands now."""

    status: str  # active | retired | invalidated
    trust: str
    pinned: bool
    title: str | None
    text: str | None
    keywords: tuple[str, ...]
    valid_to: str | None
    version: int
    skill: ShownSkill | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``skill`` only for skills)."""
        out: dict[str, Any] = {
            "status": self.status, "trust": self.trust, "pinned": self.pinned, "title": self.title, "text": self.text,
            "keywords": list(self.keywords), "valid_to": self.valid_to, "version": self.version,
        }
        if self.skill is not None:
            out["skill"] = self.skill.as_dict()
        return out


@dataclass(frozen=True)
class Extraction:
    """One extraction of an evidence session."""

    at: str | None
    model: str
    content_hash: str
    nothing: bool = False  # the extractor found nothing to keep
    prompt_hash: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        if self.nothing:
            return {"at": self.at, "model": self.model, "nothing": True, "content_hash": self.content_hash}
        return {"at": self.at, "model": self.model, "prompt_hash": self.prompt_hash, "content_hash": self.content_hash,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


@dataclass(frozen=True)
class StorySession:
    """A session the item names as evidence, as its events describe it."""

    session: str  # the internal id
    state: str  # enabled | disabled | polluted | pruned | deleted
    extractions: tuple[Extraction, ...] = ()
    agent: str | None = None
    native_id: str | None = None  # the agent's own id (what users see)
    path: str | None = None
    cwd: str | None = None
    scope: str | None = None
    started_at: str | None = None
    updated_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "session": self.session, "extractions": [x.as_dict() for x in self.extractions], "state": self.state,
            "agent": self.agent, "native_id": self.native_id, "path": self.path, "cwd": self.cwd, "scope": self.scope,
            "started_at": self.started_at, "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class StorySpan:
    """A line of an evidence session the item quotes (line-level evidence)."""

    session_id: str
    native_id: str | None
    agent: str | None
    path: str | None
    line: int | None
    item: int | None
    quote: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"native_id": self.native_id, "session_id": self.session_id, "agent": self.agent, "path": self.path,
                "line": self.line, "item": self.item, "quote": self.quote}


@dataclass(frozen=True)
class StoryRun:
    """A consolidation that changed the item."""

    consolidation: str
    started_at: str | None = None
    model: str | None = None
    status: str | None = None  # "completed" once it completed
    ended_at: str | None = None
    prompt_hash: str | None = None
    notes_applied: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the end only of a completed run)."""
        out: dict[str, Any] = {"consolidation": self.consolidation, "started_at": self.started_at, "model": self.model}
        if self.status == "completed":
            out.update(ended_at=self.ended_at, status=self.status, prompt_hash=self.prompt_hash, notes_applied=list(self.notes_applied))
        return out


@dataclass(frozen=True)
class Citing:
    """One citation of the item."""

    at: str | None  # when the agent cited it
    source: str
    citing_session: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"at": self.at, "source": self.source, "citing_session": self.citing_session}


@dataclass(frozen=True)
class Citations:
    """How often, and when last, agents cited the item."""

    count: int
    last: str | None
    entries: tuple[Citing, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the entries under ``list``)."""
        return {"count": self.count, "last": self.last, "list": [c.as_dict() for c in self.entries]}


@dataclass(frozen=True)
class TombstoneEvent:
    """One event of a tombstone (never its value)."""

    at: str | None
    event: str  # placed | suppressed | lifted | replaced
    where: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"at": self.at, "event": self.event, "where": self.where}


@dataclass(frozen=True)
class StoryTombstone:
    """A tombstone that retired the item, with its events."""

    tombstone: str
    events: tuple[TombstoneEvent, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"tombstone": self.tombstone, "events": [e.as_dict() for e in self.events]}


@dataclass(frozen=True)
class StoryNote:
    """A user's note the item rests on (its evidence)."""

    note: str
    at: str | None
    intent: str
    text: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"note": self.note, "at": self.at, "intent": self.intent, "text": self.text}


@dataclass(frozen=True)
class ItemMatch:
    """An item whose current or past text shares words with a search (``explain WORDS``)."""

    item: str
    matched_words: int
    of: int  # how many words were searched

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"item": self.item, "matched_words": self.matched_words, "of": self.of}


@dataclass(frozen=True)
class ItemStory:
    """One item's story: where it came from, every change, citations, tombstones, where it stands now."""

    item: str
    kind: str
    scope: str
    task_group: str | None
    now: ItemNow
    versions: tuple[ItemVersion, ...]
    history: tuple[ItemChange, ...]  # the item's own events, in order
    timeline: tuple[TimelineEntry, ...]  # its changes, citations and tombstones by time
    sessions: tuple[StorySession, ...]  # only the sessions the reader may see described
    spans: tuple[StorySpan, ...]
    sessions_elsewhere: int  # evidence sessions of other projects (counted, not described)
    consolidations: tuple[StoryRun, ...]
    citations: Citations
    tombstones: tuple[StoryTombstone, ...]
    notes: tuple[StoryNote, ...]
    candidates: tuple[ItemMatch, ...] = ()  # when found by words: every match, best first

    def as_dict(self) -> dict[str, Any]:
        """The JSON ``explain --json`` prints."""
        out: dict[str, Any] = {
            "item": self.item,
            "kind": self.kind,
            "scope": self.scope,
            "task_group": self.task_group,
            "now": self.now.as_dict(),
            "versions": [v.as_dict() for v in self.versions],
            "history": [h.as_dict() for h in self.history],
            "timeline": [t.as_dict() for t in self.timeline],
            "sessions": [s.as_dict() for s in self.sessions],
            "spans": [s.as_dict() for s in self.spans],
            "sessions_elsewhere": self.sessions_elsewhere,
            "consolidations": [r.as_dict() for r in self.consolidations],
            "citations": self.citations.as_dict(),
            "tombstones": [t.as_dict() for t in self.tombstones],
            "notes": [n.as_dict() for n in self.notes],
        }
        if self.candidates:
            out["candidates"] = [c.as_dict() for c in self.candidates]
        return out


@dataclass(frozen=True)
class RunCounts:
    """What a completed run changed."""

    added: int
    revised: int
    retired: int
    invalidated: int

    def as_dict(self) -> dict[str, int]:
        """JSON-ready."""
        return {"added": self.added, "revised": self.revised, "retired": self.retired, "invalidated": self.invalidated}


@dataclass(frozen=True)
class RunSummary:
    """One consolidation run, as listed (``audit --since``)."""

    consolidation: str
    status: str  # running | completed | failed
    started_at: str | None
    ended_at: str | None
    worker: str | None
    model: str | None
    prompt_hash: str | None
    input_tokens: int
    output_tokens: int
    counts: RunCounts | None  # a completed run's only
    error: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "consolidation": self.consolidation, "status": self.status, "started_at": self.started_at, "ended_at": self.ended_at,
            "worker": self.worker, "model": self.model, "prompt_hash": self.prompt_hash, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "counts": None if self.counts is None else self.counts.as_dict(), "error": self.error,
        }


@dataclass(frozen=True)
class ShownOverride:
    """Something code did or refused that the model did not ask for (texts through the matcher)."""

    action: str  # retired | rejected | suppressed
    reason: str
    item_id: str | None
    edit: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the fields of ``consolidation.Override``)."""
        return {"action": self.action, "reason": self.reason, "item_id": self.item_id, "edit": self.edit}


@dataclass(frozen=True)
class SelectedShown:
    """A session a run selected as input."""

    session: str
    rank: int
    content_hash: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"session": self.session, "rank": self.rank, "content_hash": self.content_hash}


@dataclass(frozen=True)
class RunInputs:
    """A run's inputs: the selection and how it differs from the last run's."""

    selected: tuple[SelectedShown, ...]
    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]

    def __getitem__(self, name: str) -> tuple[str, ...]:
        """``added`` | ``changed`` | ``removed`` by name (the pages list them in turn)."""
        found: tuple[str, ...] = {"added": self.added, "changed": self.changed, "removed": self.removed}[name]
        return found

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"selected": [s.as_dict() for s in self.selected], "added": list(self.added),
                "changed": list(self.changed), "removed": list(self.removed)}


@dataclass(frozen=True)
class RunEdit:
    """One edit a run made to an item, with the item's words before and after."""

    item: str
    op: str  # add | revise | retire | invalidate
    by: str
    reason: str
    before: ItemText | None
    after: ItemText | None
    tombstone: str | None = None  # a retirement by a tombstone
    valid_to: str | None = None  # invalidations
    evidence: tuple[str, ...] | None = None  # additions and revisions

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the fields of its op only)."""
        out: dict[str, Any] = {"item": self.item, "op": self.op, "by": self.by, "reason": self.reason,
                               "before": _opt(self.before), "after": _opt(self.after)}
        if self.tombstone is not None:
            out["tombstone"] = self.tombstone
        if self.op == "invalidate":
            out["valid_to"] = self.valid_to
        if self.evidence is not None:
            out["evidence"] = list(self.evidence)
        return out


@dataclass(frozen=True)
class PlanRound:
    """One planning round of a run: edits rejected, a plan refused, or a model call that failed."""

    round: int
    model: str
    rejected: tuple[ShownOverride, ...] = ()
    proposed: int | None = None
    refused: bool = False
    reason: str | None = None  # a refused plan's
    error: str | None = None  # a failed model call's

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        rejected = [o.as_dict() for o in self.rejected]
        if self.error is not None:
            return {"round": self.round, "model": self.model, "error": self.error, "rejected": rejected}
        return {"round": self.round, "model": self.model, "proposed": self.proposed, "refused": self.refused,
                "reason": self.reason, "rejected": rejected}


@dataclass(frozen=True)
class Repair:
    """The round in which the model got its plan back with the reasons it failed."""

    round: int
    problems: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"round": self.round, "problems": list(self.problems)}


@dataclass(frozen=True)
class Fallback:
    """The offline consolidator planned the run instead of the model."""

    consolidator: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"consolidator": self.consolidator, "reason": self.reason}


@dataclass(frozen=True)
class Hidden:
    """What a project-scoped audit left out."""

    edits: int
    inputs: int

    def as_dict(self) -> dict[str, int]:
        """JSON-ready."""
        return {"edits": self.edits, "inputs": self.inputs}


@dataclass(frozen=True, kw_only=True)
class RunAudit(RunSummary):
    """One run's audit: inputs, each edit with the text before and after, code's overrides, rounds."""

    inputs: RunInputs
    project: str | None
    agent_ids: Mapping[str, str]  # internal session id -> the agent's own id (what users see)
    hidden: Hidden
    edits: tuple[RunEdit, ...]
    overrides: tuple[ShownOverride, ...]
    notes_applied: tuple[str, ...] = ()
    user_profile: str = ""
    rounds: tuple[PlanRound, ...] = ()
    repair: Repair | None = None
    fallback: Fallback | None = None

    @property
    def code_retired(self) -> tuple[ShownOverride, ...]:
        """Items code retired on its own."""
        return tuple(o for o in self.overrides if o.action == "retired")

    @property
    def rejected(self) -> tuple[ShownOverride, ...]:
        """Edits code refused."""
        return tuple(o for o in self.overrides if o.action == "rejected")

    def as_dict(self) -> dict[str, Any]:
        """The JSON ``audit --json`` prints."""
        return {
            **super().as_dict(),
            "inputs": self.inputs.as_dict(),
            "project": self.project,
            "agent_ids": dict(self.agent_ids),
            "hidden": self.hidden.as_dict(),
            "edits": [e.as_dict() for e in self.edits],
            "code_retired": [o.as_dict() for o in self.code_retired],
            "rejected": [o.as_dict() for o in self.rejected],
            "overrides": [o.as_dict() for o in self.overrides],
            "notes_applied": list(self.notes_applied),
            "user_profile": self.user_profile,
            "rounds": [r.as_dict() for r in self.rounds],
            "repair": None if self.repair is None else self.repair.as_dict(),
            "fallback": None if self.fallback is None else self.fallback.as_dict(),
        }


@dataclass(frozen=True)
class SourceLine:
    """One transcript entry an item's words come from."""

    entry: int  # its position in the session's transcript, from 1
    kind: str  # user | assistant | tool_call | tool_output
    tool: str | None
    text: str  # an excerpt, forgotten values cut out
    shared: int  # how many of the item's words it holds


CountTokens = Callable[[str], int]


class HistoryReads(Protocol):
    """The reads of the log's history (explain, audit, history, the web's item, run and time pages)."""

    def explain(self, item_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> ItemStory | None:
        """The item's story, or None when no such item was recorded or a reader in ``project`` may not read it.

        ``project`` None: every scope, every evidence session described.
        """
        ...

    def find_items(self, text: str, limit: int = 10, project: str | None = None) -> list[ItemMatch]:
        """Items whose current or past text shares the most words with ``text``, best first."""
        ...

    def runs(self, since: datetime | None = None) -> list[RunSummary]:
        """Every consolidation run (started at or after ``since``), oldest first."""
        ...

    def latest_run(self) -> UUID | None:
        """The most recently started run (None: no run yet)."""
        ...

    def audit(self, run_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> RunAudit | None:
        """One run's audit (None: no such run); ``project``: only its and global edits and inputs."""
        ...

    def folder_as_of(self, at: datetime, matcher: TombstoneMatcher, count_tokens: CountTokens, project: str | None = None) -> dict[str, str]:
        """The memory folder's files (name -> text) as they stood at ``at`` (transaction time)."""
        ...

    def items_valid_at(self, at: datetime, matcher: TombstoneMatcher, project: str | None = None) -> list[ItemRow]:
        """The items memory holds now to have been true at ``at`` (valid time)."""
        ...

    def folder_valid_at(self, at: datetime, matcher: TombstoneMatcher, count_tokens: CountTokens, project: str | None = None) -> dict[str, str]:
        """A folder of the items that were true at ``at``."""
        ...

    def source_lines(self, session_id: UUID, item_text: str, matcher: TombstoneMatcher, limit: int = 3) -> list[SourceLine]:
        """The entries of a session that share the most words with ``item_text``, in session order."""
        ...

