"""Ports: what the domain needs from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from uuid import UUID

if TYPE_CHECKING:  # annotations only: the store opens without these pydantic models (the SessionStart hook)
    from mnemolog.domain.extraction import ExtractionAnswer, TokenUsage
    from mnemolog.domain.plan import ConsolidationPlan
    from mnemolog.domain.skill import Skill
    from mnemolog.domain.transcript import Transcript


class ModelError(Exception):
    """A model call failed; ``retryable`` says whether a later attempt may succeed."""

    def __init__(self, message: str, *, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class Extractor(Protocol):
    """Phase 1: turn one transcript into a stage-1 answer."""

    name: str

    def extract(self, transcript: Transcript) -> ExtractionAnswer:
        """Return the answer, or raise ``ModelError``."""
        ...


@dataclass(frozen=True)
class ItemForModel:
    """A current item as the consolidation model sees it, under a short handle."""

    handle: str
    kind: str
    scope: str
    task_group: str
    title: str
    text: str
    keywords: tuple[str, ...]
    evidence: tuple[str, ...]
    skill: Skill | None = None  # a skill's name, steps and what it relies on
    edited_by_user: bool = False  # a person wrote the title and text: keep their words


@dataclass(frozen=True)
class InputForModel:
    """One selected extraction as the consolidation model sees it."""

    session_id: str
    scope: str
    cwd: str
    updated_at: datetime | None
    rollout_summary: str
    raw_memory: str
    change: str  # "added" | "changed" | "unchanged"


@dataclass(frozen=True)
class NoteForModel:
    """A user's pending request to remember or correct something."""

    note_id: str
    intent: str
    scope: str
    text: str


@dataclass(frozen=True)
class PlanRepair:
    """The repair round: the model's own plan, handed back with why code turned edits down."""

    plan: ConsolidationPlan
    problems: Sequence[str]  # "edit 2: revise I1 (...): unknown item handle 'I1'", value-free


@dataclass(frozen=True)
class ConsolidationRequest:
    """Everything phase 2 gives a model (``repair`` set: answer again, fixing the plan)."""

    items: Sequence[ItemForModel]
    inputs: Sequence[InputForModel]
    removed_sessions: Sequence[str]
    notes: Sequence[NoteForModel]
    repair: PlanRepair | None = None


@dataclass(frozen=True)
class ConsolidationAnswer:
    """A model's plan with the facts the log records about it."""

    plan: ConsolidationPlan
    model: str
    prompt_hash: str
    usage: TokenUsage


class Consolidator(Protocol):
    """Phase 2: propose a plan of edits."""

    name: str

    def consolidate(self, request: ConsolidationRequest) -> ConsolidationAnswer:
        """Return a plan, or raise ``ModelError``."""
        ...


# ------------------------------------------------------------------ sessions on disk, redaction, scope


class SessionUnreadable(Exception):
    """A session file could not be read at all; ``str(error)`` is a one-line message."""


class FoundSession(Protocol):
    """A session file a source found, with a per-file error if it cannot be opened."""

    @property
    def path(self) -> Path:
        """Where the file is."""
        ...

    @property
    def error(self) -> str | None:
        """Why the file cannot be read (None when it can)."""
        ...


class SessionSource(Protocol):
    """Where recorded agent sessions come from (files on disk)."""

    def discover(self, paths: Sequence[Path]) -> Sequence[FoundSession]:
        """Every session file under ``paths`` (files or folders), sorted, without duplicates."""
        ...

    def content_hash(self, path: Path) -> str:
        """A digest of the file's bytes (unchanged bytes: nothing to read again); raises ``SessionUnreadable``."""
        ...

    def read(self, path: Path) -> Transcript:
        """The file's transcript; raises ``SessionUnreadable``."""
        ...


class Redactor(Protocol):
    """Cuts secrets out of text before it is stored or sent to a model (guarantee 5)."""

    def redact(self, text: str) -> tuple[str, int]:
        """The text with its secrets replaced, and how many were."""
        ...

    def redact_transcript(self, transcript: Transcript) -> tuple[Transcript, int]:
        """The transcript with every session-derived text redacted, and how many secrets were."""
        ...


class ScopeLookup(Protocol):
    """Which project a session belongs to."""

    def remote_of(self, transcript: Transcript) -> str | None:
        """The session's git remote: as recorded, else asked of its repository when that is here."""
        ...

    def scope_key(self, remote: str | None, cwd: str | None) -> str:
        """The project scope key from a git remote and a working folder."""
        ...


# ------------------------------------------------------------------ data keys (crypto-shredding)


class DataKeys(Protocol):
    """The data keys sealed text is encrypted under, one set per aggregate, kept outside the log.

    ``seal`` encrypts under the subject's current key (made on first use);
    ``rotate`` gives the subject a new current key; ``shred`` destroys every
    key of the subject but the current one, so what was sealed under them can
    never be read again.
    """

    def seal(self, subject: UUID, plaintext: bytes, new: bool = False) -> dict[str, str]:
        """``plaintext`` encrypted under the subject's current key, as a JSON-ready dict naming the key.

        ``new``: the subject's first event (no key can exist yet: none is looked up).
        """
        ...

    def open(self, subject: UUID, sealed: dict[str, str]) -> bytes | None:
        """The plaintext of something ``seal`` returned, or None when its key was destroyed."""
        ...

    def rotate(self, subject: UUID) -> None:
        """Give the subject a new current key (what is sealed from now on uses it)."""
        ...

    def shred(self, subject: UUID) -> int:
        """Destroy every key of the subject but the current one; how many were destroyed."""
        ...


class StoredCopies(Protocol):
    """The copies of logged text a store keeps besides the log (views, indexes, free pages)."""

    def purge_copies(self) -> None:
        """Rebuild every copy from the log and compact the files, so no destroyed text survives in them."""
        ...


Progress = Callable[[int, int, str], None]
"""Told (done, total, label) as a long command advances."""


def no_progress(done: int, total: int, label: str) -> None:
    """A progress display that shows nothing."""
    return None


class Workers(Protocol):
    """Who is working, and whether the holder of a claim or lease still is (process liveness: adapters.processes)."""

    def name(self) -> str:
        """This thread's worker name, recorded on claims and leases."""
        ...

    def alive(self, worker: str) -> bool:
        """False only when it is certain that ``worker`` is gone (its process on this host has exited)."""
        ...
