"""Ports: what the domain needs from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from mnemolog.domain.extraction import ExtractionAnswer, TokenUsage
from mnemolog.domain.plan import ConsolidationPlan
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
class ConsolidationRequest:
    """Everything phase 2 gives a model."""

    items: Sequence[ItemForModel]
    inputs: Sequence[InputForModel]
    removed_sessions: Sequence[str]
    notes: Sequence[NoteForModel]


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


class Redactor(Protocol):
    """Cuts secrets out of a text: the cleaned text and how many were found (guarantee 5)."""

    def __call__(self, text: str) -> tuple[str, int]:
        """Return the text with every secret replaced, and the count."""
        ...
