"""Models with queued replies (like a mock model in a plugin system), for domain-level tests.

A reply is a ``StageOneOutput`` / ``ConsolidationPlan``, a ``ModelError`` to raise,
or a callable that builds the reply from the request (to script a model that
keeps doing something, e.g. re-adding a forgotten value).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from mnemolog.domain.extraction import ExtractionAnswer, StageOneOutput, TokenUsage
from mnemolog.domain.plan import ConsolidationPlan
from mnemolog.domain.ports import ConsolidationAnswer, ConsolidationRequest, ModelError
from mnemolog.domain.transcript import Transcript


class ScriptedExtractor:
    """Phase 1 that answers from a queue, then with ``default`` (a reply or a callable)."""

    name = "scripted-extractor"

    def __init__(self, *replies: Any, default: Any = None) -> None:
        self.replies: deque[Any] = deque(replies)
        self.default = default
        self.seen: list[Transcript] = []

    def extract(self, transcript: Transcript) -> ExtractionAnswer:
        self.seen.append(transcript)
        reply = self.replies.popleft() if self.replies else self.default
        if callable(reply) and not isinstance(reply, StageOneOutput):
            reply = reply(transcript)
        if isinstance(reply, ModelError):
            raise reply
        if reply is None:
            raise AssertionError("ScriptedExtractor ran out of replies")
        return ExtractionAnswer(output=reply, model=self.name, prompt_hash="scripted", usage=TokenUsage(input_tokens=10, output_tokens=5))


class ScriptedConsolidator:
    """Phase 2 that answers from a queue, then with ``default``.

    Asked to repair its plan with nothing queued and no default, it answers
    with its last reply again (as a deterministic model does).
    """

    name = "scripted-consolidator"

    def __init__(self, *replies: Any, default: Any = None) -> None:
        self.replies: deque[Any] = deque(replies)
        self.default = default
        self.seen: list[ConsolidationRequest] = []
        self._last: Any = None

    def consolidate(self, request: ConsolidationRequest) -> ConsolidationAnswer:
        self.seen.append(request)
        reply = self.replies.popleft() if self.replies else self.default
        if reply is None and request.repair is not None:
            reply = self._last
        self._last = reply
        if callable(reply) and not isinstance(reply, ConsolidationPlan):
            reply = reply(request)
        if isinstance(reply, ModelError):
            raise reply
        if reply is None:
            raise AssertionError("ScriptedConsolidator ran out of replies")
        return ConsolidationAnswer(plan=reply, model=self.name, prompt_hash="scripted", usage=TokenUsage(input_tokens=20, output_tokens=8))


def memory(summary: str, raw: str, slug: str | None = "task") -> StageOneOutput:
    """A stage-1 answer."""
    return StageOneOutput(rollout_summary=summary, rollout_slug=slug, raw_memory=raw)


def handle_for(request: ConsolidationRequest, predicate: Callable[[Any], bool]) -> str:
    """The handle of the first current item matching ``predicate``."""
    return next(item.handle for item in request.items if predicate(item))
