"""The read port: every query the services, the CLI and the MCP server make, as typed methods.

One typed interface per view (sessions, items, notes, consolidations,
tombstones), joined in ``MemoryReads``; ``projections.view_reads`` implements it over
the view tables on SQLite and PostgreSQL. Nothing outside ``projections/``
writes SQL or names a view table. Every method returns what the views hold
now: a service that must see its own writes asks its unit of work for the
reads (``UnitOfWork.reads``), which waits for them once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol
from uuid import UUID

if TYPE_CHECKING:  # annotations only: reading context loads no aggregate's module (pydantic event classes)
    from mnemolog.domain.consolidation import SelectedInput
    from mnemolog.domain.evidence_spans import EvidenceSpan
    from mnemolog.domain.selection import Candidate
    from mnemolog.domain.skill import Skill
    from mnemolog.domain.tombstone_matcher import TombstoneRule


@dataclass(frozen=True, slots=True)  # slots: a folder of 100k items holds 100k of them
class ItemRow:
    """One memory item as every reader sees it (the one row type of the items view)."""

    item_id: UUID
    kind: str  # preference | knowledge | failure | task | skill
    scope: str  # a project scope key or "global"
    task_group: str
    title: str
    text: str
    keywords: tuple[str, ...]
    evidence: tuple[UUID, ...]  # session ids
    trust: str = "proposed"  # proposed | accepted | doubted | rejected
    status: str = "active"  # active | retired | invalidated
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    revision: int = 1
    use_count: int = 0  # times cited (what agents said they used)
    last_used: datetime | None = None
    pinned: bool = False  # a person pinned it: first in context and the folder
    edited_by_user: bool = False  # a person rewrote its text: runs keep their words
    served_count: int = 0  # times served by a read (hook, context, MCP), cited or not
    last_served: datetime | None = None
    spans: tuple[EvidenceSpan, ...] = ()  # line-level evidence: session, file line, quote
    # The tokens of the item's context line, counted once when it was projected (None: not counted).
    context_tokens: int | None = None
    skill: Skill | None = None  # kind "skill": its name, steps and what it relies on (the text is its description)
    # The tokens of the item's memory_summary.md line, counted when it was projected (None: not counted).
    summary_tokens: int | None = None


# The encoding the views count context lines in (a reader counting in another one counts itself).
CONTEXT_TOKEN_ENCODING = "o200k_base"


@dataclass(frozen=True)
class SearchHit:
    """An item that matched a search, with its relevance (higher is better)."""

    item: ItemRow
    score: float


@dataclass(frozen=True)
class EvidenceSession:
    """A session an item names as evidence, as ``show`` describes it."""

    session_id: UUID
    source: str
    native_id: str
    cwd: str
    scope: str
    updated_at: datetime | None
    rollout_summary: str
    path: str = ""  # the session file it was read from


@dataclass(frozen=True)
class ViewCounts:
    """How much the views hold (``doctor``)."""

    sessions: int
    items: int
    active_items: int
    consolidations: int
    tombstones: int
    notes: int


@dataclass(frozen=True)
class SelectedSession:
    """A selected extraction's content, for the consolidation model."""

    session_id: UUID
    scope: str
    cwd: str
    updated_at: datetime | None
    rollout_summary: str
    raw_memory: str


@dataclass(frozen=True)
class SessionTexts:
    """The stored texts of a session a tombstone may have to be cut out of."""

    session_id: UUID
    scope: str
    texts: tuple[str, ...]


@dataclass(frozen=True)
class NoteRow:
    """A user's note and its state."""

    note_id: UUID
    intent: str  # remember | correct
    scope: str
    text: str
    source: str
    written_at: datetime | None
    applied_by: UUID | None
    withdrawn: bool = False

    @property
    def state(self) -> str:
        """pending | applied | withdrawn."""
        if self.withdrawn:
            return "withdrawn"
        return "applied" if self.applied_by is not None else "pending"


@dataclass(frozen=True)
class SessionState:
    """Where one recorded session stands in phase 1 (``list sessions``, coverage)."""

    session_id: UUID
    source: str  # the agent: codex | claude-code
    native_id: str  # the agent's own session id
    scope: str
    cwd: str
    updated_at: datetime | None
    interactive: bool
    user_messages: int
    mode: str  # enabled | disabled | polluted
    eligible: bool | None  # None: never assessed
    eligibility_reasons: tuple[str, ...]
    extraction_status: str  # none | claimed | extracted | nothing | retrying | failed
    current: bool  # the answer (extracted or nothing) is for the session's current content
    attempts: int
    retry_after: datetime | None
    last_error: str | None
    extracted_at: datetime | None
    pruned: bool
    deleted: bool


@dataclass(frozen=True)
class TombstoneRow:
    """A tombstone as listed (never its value: the view holds only a keyed hash)."""

    tombstone_id: UUID
    scope: str
    reason: str
    placed_at: datetime | None
    lifted: bool
    suppressions: int


@dataclass(frozen=True)
class RunRow:
    """One consolidation run, as listed."""

    run_id: UUID
    status: str  # running | completed | failed
    started_at: datetime | None
    ended_at: datetime | None
    model: str
    added: int
    revised: int
    retired: int
    invalidated: int
    error: str | None


@dataclass(frozen=True)
class InjectionRow:
    """One serving of memory to a session, as the injection log recorded it."""

    injection_id: UUID
    session: str | None
    project: str
    surface: str
    served_at: datetime | None
    tokens: int
    items: tuple[dict[str, object], ...]  # ServedItem fields: item_id, rank, trust, citations, updated_at, score, why
    excerpts: tuple[str, ...] = ()  # the history excerpts served, by reference (history:<session>:<n>)


@dataclass(frozen=True)
class CitationRow:
    """One recorded citation: who cited which items, when."""

    citation_id: UUID
    citing_session: str | None
    source: str
    cited_at: datetime | None
    item_ids: tuple[UUID, ...]


class SessionReads(Protocol):
    """The sessions view."""

    def known_files(self) -> dict[str, str]:
        """Content hash by file path of every session not deleted (ingest skips unchanged bytes)."""
        ...

    def sessions_to_reassess(self) -> list[UUID]:
        """Sessions whose eligibility may change with time (not yet eligible, not deleted)."""
        ...

    def sessions_to_extract(self, now: datetime, limit: int | None = None) -> list[UUID]:
        """Eligible, enabled sessions whose current content has no answer yet and may be tried now."""
        ...

    def candidates(self) -> list[Candidate]:
        """Sessions with a current extraction, with their usage ranks (phase-2 selection)."""
        ...

    def selected_sessions(self, ids: Sequence[UUID]) -> dict[UUID, SelectedSession]:
        """Content of the given sessions."""
        ...

    def live_session_ids(self) -> frozenset[UUID]:
        """Sessions that may be evidence (not deleted, pruned, polluted; extraction present)."""
        ...

    def gone_session_ids(self) -> frozenset[UUID]:
        """Sessions that can no longer feed memory (deleted, pruned, disabled, polluted)."""
        ...

    def withdrawable_session_ids(self) -> list[UUID]:
        """Sessions neither pruned nor deleted (what a reset withdraws)."""
        ...

    def session_texts(self) -> list[SessionTexts]:
        """Every session's stored texts (first message, rollout summary and slug, raw memory)."""
        ...

    def resolve_session(self, reference: str) -> UUID | None:
        """A session's id from its mnemolog id or its agent's own id; None when unknown or ambiguous."""
        ...

    def session_states(self, project: str | None = None) -> list[SessionState]:
        """Every session not deleted (of ``project`` only, when given), newest first, with its phase-1 state."""
        ...


class ItemReads(Protocol):
    """The items view (with usage)."""

    def active_items(self, project: str | None = None) -> list[ItemRow]:
        """Current memory (optionally for one project plus global), by id."""
        ...

    def known_item_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these item ids exist."""
        ...

    def context_items(self, project: str, offset: int, limit: int) -> list[ItemRow]:
        """Current, not rejected items of ``project`` and global, best first: pinned ones, then accepted, then
        proposed, then doubted; within each the most used, then the most recently updated."""
        ...

    def context_count(self, project: str) -> int:
        """How many items ``context_items`` lists for ``project`` in all."""
        ...

    def item(self, item_id: UUID, project: str) -> ItemRow | None:
        """One item of ``project`` or global, whatever its status; None when unknown or another project's."""
        ...

    def evidence_of(self, item_id: UUID) -> list[EvidenceSession]:
        """The recorded sessions an item names as evidence, oldest first."""
        ...

    def search(self, query: str, project: str | None, kind: str | None, limit: int, any_word: bool = True) -> list[SearchHit]:
        """Current items of ``project`` and global matching the words of ``query``, best first.

        Every word must match; when no item has them all, items with any are
        ranked instead (unless not ``any_word``). ``project`` None searches every scope (administration only).
        """
        ...

    def counts(self) -> ViewCounts:
        """How many sessions, items (and active ones), consolidations, tombstones and notes the views hold."""
        ...

    def list_items(
        self,
        project: str | None = None,
        *,
        kind: str | None = None,
        trust: str | None = None,
        status: str | None = None,
        text: str | None = None,
        limit: int = 200,
    ) -> list[ItemRow]:
        """Items of ``project`` and global (every scope when None), pinned first, then the most recently updated.

        ``text`` keeps items whose title or text contains it (any case); the
        other filters are exact. A retired item's text has left the view.
        """
        ...


class NoteReads(Protocol):
    """The notes view."""

    def pending_notes(self) -> list[NoteRow]:
        """Notes no consolidation has applied and nobody withdrew, oldest first."""
        ...

    def note_ids(self) -> list[UUID]:
        """Every note (forgetting scrubs their texts)."""
        ...

    def note_sources(self) -> set[str]:
        """Where the notes came from (notes files are imported once each)."""
        ...

    def notes(self, project: str | None = None, include_done: bool = True) -> list[NoteRow]:
        """Notes of ``project`` and global ones (every note when None), oldest first; only pending ones unless ``include_done``."""
        ...

    def live_note_ids(self) -> frozenset[UUID]:
        """Notes that may be evidence: every note not withdrawn (applied ones included)."""
        ...


class ConsolidationReads(Protocol):
    """The consolidations view."""

    def last_completed_selection(self) -> tuple[SelectedInput, ...]:
        """The selection of the last completed run (empty when none)."""
        ...

    def user_profile(self) -> str:
        """The user profile of the last completed consolidation."""
        ...

    def profiles(self) -> list[tuple[UUID, str]]:
        """Every run that stored a user profile, with the profile (forgetting scrubs them)."""
        ...

    def runs(self, limit: int = 50) -> list[RunRow]:
        """The latest consolidation runs, newest first."""
        ...


class InjectionReads(Protocol):
    """The injection log and the citations (what a session was served, and what it cited)."""

    def injections(self, session: str) -> list[InjectionRow]:
        """Every serving of memory to ``session`` (the agent's own id), oldest first."""
        ...

    def citations_by(self, session: str) -> list[CitationRow]:
        """Every citation ``session`` recorded, oldest first."""
        ...


class TombstoneReads(Protocol):
    """The tombstones view."""

    def tombstone_rules(self) -> list[TombstoneRule]:
        """Active tombstones."""
        ...

    def tombstones(self, project: str | None = None) -> list[TombstoneRow]:
        """Every tombstone (of ``project`` and global ones, when given), newest first; never a value."""
        ...


ID_KINDS = ("items", "sessions", "notes", "tombstones", "runs")


class IdReads(Protocol):
    """Ids by prefix, in every view (git-style short ids)."""

    def ids_with_prefix(self, what: str, prefix: str, project: str | None = None, limit: int = 10) -> list[UUID]:
        """Ids of ``what`` (one of ``ID_KINDS``) starting with ``prefix``, sorted, at most ``limit``.

        ``prefix`` holds only lowercase hex digits and dashes. Sessions also
        match their agent's own id. With ``project``, items and tombstones of
        other projects are not candidates (global ones are).
        """
        ...


class MemoryReads(
    SessionReads, ItemReads, NoteReads, ConsolidationReads, TombstoneReads, IdReads, InjectionReads, Protocol
):
    """Every view, as one port."""
