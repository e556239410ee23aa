"""Phase 1 and phase 2 through the ``openai`` client (any OpenAI-compatible server).

Both adapters send a system message and one user message and ask for
structured output (``chat.completions.parse`` with a pydantic model as the
response format). The client's own retries are off; this module retries 429,
5xx and connection errors with exponential backoff, and turns everything else
into ``ModelError``:

- 4xx other than 429 → ``ModelError(retryable=False)``;
- an answer that is not JSON, breaks the schema, was cut by the token limit
  or is empty → ``ModelError(retryable=True)``;
- a refusal → ``ModelError(retryable=False)``.

Secret redaction is the caller's job, before and after.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import datetime
from typing import TypeVar

import openai
import pydantic
from mnemolog.adapters.tokens import count_tokens
from mnemolog.adapters.transcript_rendering import plain_codex_tokens, render_for_model
from mnemolog.domain.extraction import ExtractionAnswer, StageOneOutput, TokenUsage
from mnemolog.domain.plan import ConsolidationPlan
from mnemolog.domain.ports import (
    ConsolidationAnswer,
    ConsolidationRequest,
    InputForModel,
    ItemForModel,
    ModelError,
    NoteForModel,
)
from mnemolog.domain.transcript import Transcript
from mnemolog.prompts import Prompt, combined_hash, load_prompt, neutralise_tag, render
from pydantic import BaseModel

__all__ = ["OpenAIConsolidator", "OpenAIExtractor"]

T = TypeVar("T", bound=BaseModel)

SESSION_TAG = "session_data"
MEMORY_TAG = "memory_data"


class _ChatModel:
    """Shared client, retry loop and answer checking."""

    name = "openai"
    _system_prompt = ""
    _input_prompt = ""

    def __init__(
        self,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        input_budget_tokens: int = 100_000,
        *,
        max_backoff: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.model = model
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.input_budget_tokens = input_budget_tokens
        self._sleep = sleep
        self._system: Prompt = load_prompt(self._system_prompt)
        self._input: Prompt = load_prompt(self._input_prompt)
        self.prompt_hash = combined_hash(self._system, self._input)
        # An OpenAI-compatible local server usually needs no key, but the client insists on one.
        self._client = openai.OpenAI(
            api_key=api_key or "not-needed",
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
        )

    def _delay(self, attempt: int, error: openai.APIError) -> float:
        delay = self.backoff * (2.0**attempt)
        if isinstance(error, openai.APIStatusError):
            retry_after = error.response.headers.get("retry-after")
            if retry_after:
                with contextlib.suppress(ValueError):
                    delay = max(delay, float(retry_after))
        return min(delay, self.max_backoff)

    def _call(self, system: str, user: str, schema: type[T]) -> tuple[T, TokenUsage]:
        """Send one request, retrying transient failures; return the parsed answer and usage."""
        attempt = 0
        while True:
            try:
                completion = self._client.chat.completions.parse(
                    model=self.model,
                    messages=[
                        {"role": "system", "content": system},
                        {"role": "user", "content": user},
                    ],
                    response_format=schema,
                )
                break
            except (
                openai.APIConnectionError,
                openai.RateLimitError,
                openai.InternalServerError,
            ) as error:
                transient: openai.APIError = error
            except openai.APIStatusError as error:
                if error.status_code == 429 or error.status_code >= 500:
                    transient = error
                else:
                    raise ModelError(f"{self.model}: {_rejected(error)}", retryable=False) from error
            except openai.LengthFinishReasonError as error:
                raise ModelError(
                    f"{self.model}: answer cut off by the output token limit", retryable=True
                ) from error
            except openai.ContentFilterFinishReasonError as error:
                raise ModelError(
                    f"{self.model}: answer blocked by a content filter", retryable=False
                ) from error
            except pydantic.ValidationError as error:
                raise ModelError(
                    f"{self.model}: answer is not valid {schema.__name__} JSON: "
                    f"{error.error_count()} error(s), first: {_first_error(error)}",
                    retryable=True,
                ) from error
            except openai.APIResponseValidationError as error:
                raise ModelError(
                    f"{self.model}: malformed response: {error.message}", retryable=True
                ) from error
            if attempt >= self.max_retries:
                raise ModelError(
                    f"{self.model}: gave up after {attempt + 1} attempt(s): {_describe(transient)}",
                    retryable=True,
                ) from transient
            self._sleep(self._delay(attempt, transient))
            attempt += 1
        return self._answer(completion, schema)

    def _answer(self, completion: object, schema: type[T]) -> tuple[T, TokenUsage]:
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise ModelError(f"{self.model}: response has no choices", retryable=True)
        message = choices[0].message
        if getattr(message, "refusal", None):
            raise ModelError(f"{self.model}: the model refused: {message.refusal}", retryable=False)
        parsed = getattr(message, "parsed", None)
        if not isinstance(parsed, schema):
            raise ModelError(
                f"{self.model}: answer has no {schema.__name__} content", retryable=True
            )
        usage = getattr(completion, "usage", None)
        tokens = TokenUsage(
            input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )
        return parsed, tokens


def _first_error(error: pydantic.ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "answer"
    return f"{where}: {first.get('msg', '')}"


def _rejected(error: openai.APIStatusError) -> str:
    """A refused request as a person reads it: "401 Unauthorized from the model server: <its message>" and what to check."""
    from http import HTTPStatus

    try:
        phrase = HTTPStatus(error.status_code).phrase
    except ValueError:
        phrase = "error"
    body = error.body.get("message") if isinstance(error.body, dict) else None
    hint = " (check the API key: OPENAI_API_KEY, or MNEMOLOG_EXTRACT_API_KEY / MNEMOLOG_CONSOLIDATE_API_KEY)" if error.status_code in (401, 403) else ""
    return f"{error.status_code} {phrase} from the model server: {body or error.message}{hint}"


def _describe(error: openai.APIError) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    return f"{type(error).__name__}: {error.message}"


def _time(value: datetime | None) -> str:
    return value.isoformat() if value else "unknown"


class OpenAIExtractor(_ChatModel):
    """Phase 1 with an OpenAI-compatible model: one transcript in, a ``StageOneOutput`` out.

    The transcript is rendered compactly (see ``transcript_rendering``) within
    ``input_budget_tokens`` and placed in a ``<session_data>`` block; metadata
    stays outside it.
    """

    _system_prompt = "stage_one_system"
    _input_prompt = "stage_one_input"

    def build_messages(self, transcript: Transcript) -> tuple[str, str]:
        """The system and user messages this extractor sends for ``transcript``."""
        overhead = count_tokens(self._system.text) + count_tokens(self._input.text) + 200
        budget = max(self.input_budget_tokens - overhead, 256)
        rendered = render_for_model(transcript, budget)
        meta = transcript.meta
        if rendered.cut_tokens:
            note = f"{rendered.tokens} tokens; the middle of the session was cut"
        elif rendered.level or rendered.dropped_items:
            note = f"{rendered.tokens} tokens; long outputs trimmed" + (
                f", {rendered.dropped_items} items omitted" if rendered.dropped_items else ""
            )
        else:
            note = f"{rendered.tokens} tokens; complete"
        user = render(
            self._input,
            session_id=meta.native_id,
            agent=" ".join(part for part in (meta.source, meta.agent_version or "") if part),
            cwd=meta.cwd,
            git_branch=meta.git_branch,
            started_at=_time(meta.started_at),
            updated_at=_time(meta.updated_at),
            rendering_note=note,
            session=neutralise_tag(rendered.text, SESSION_TAG),
        )
        return self._system.text, user

    def extract(self, transcript: Transcript) -> ExtractionAnswer:
        """Ask the model for the stage-1 answer; raise ``ModelError`` on failure."""
        system, user = self.build_messages(transcript)
        output, usage = self._call(system, user, StageOneOutput)
        return ExtractionAnswer(
            output=output,
            model=self.model,
            prompt_hash=self.prompt_hash,
            usage=usage,
            input_tokens_plain=plain_codex_tokens(transcript),
        )


def _format_item(item: ItemForModel) -> str:
    return "\n".join(
        [
            f"## {item.handle} ({item.kind}, scope={item.scope}, task_group={item.task_group or '-'})",
            f"title: {item.title}",
            f"keywords: {', '.join(item.keywords)}",
            f"evidence: {', '.join(item.evidence)}",
            item.text,
        ]
    )


def _format_input(entry: InputForModel, *, with_raw_memory: bool = True) -> str:
    lines = [
        f"## session {entry.session_id} [{entry.change}]",
        f"scope: {entry.scope}",
        f"cwd: {entry.cwd}",
        f"updated_at: {_time(entry.updated_at)}",
        "",
        "### summary",
        entry.rollout_summary.strip(),
    ]
    if with_raw_memory:
        lines += ["", "### raw memory", entry.raw_memory.strip()]
    else:
        lines += ["", "### raw memory", "(unchanged since the last run; left out for length)"]
    return "\n".join(lines)


def _format_note(note: NoteForModel) -> str:
    return f"## note {note.note_id} ({note.intent}, scope={note.scope})\n{note.text.strip()}"


class OpenAIConsolidator(_ChatModel):
    """Phase 2 with an OpenAI-compatible model: a request in, a ``ConsolidationPlan`` out."""

    _system_prompt = "consolidation_system"
    _input_prompt = "consolidation_input"

    def build_messages(self, request: ConsolidationRequest) -> tuple[str, str]:
        """The system and user messages for ``request``.

        When the input exceeds the budget, the raw memories of unchanged inputs
        are left out (their summaries stay); if it still does not fit, this
        raises ``ModelError(retryable=False)``.
        """
        user = self._render(request, full=True)
        if count_tokens(self._system.text) + count_tokens(user) > self.input_budget_tokens:
            user = self._render(request, full=False)
            total = count_tokens(self._system.text) + count_tokens(user)
            if total > self.input_budget_tokens:
                raise ModelError(
                    f"consolidation input of {total} tokens exceeds the budget of "
                    f"{self.input_budget_tokens}",
                    retryable=False,
                )
        return self._system.text, user

    def _render(self, request: ConsolidationRequest, *, full: bool) -> str:
        counts = {"added": 0, "changed": 0, "unchanged": 0}
        for entry in request.inputs:
            counts[entry.change] = counts.get(entry.change, 0) + 1
        items = "\n\n".join(_format_item(item) for item in request.items) or "(no items yet)"
        inputs = (
            "\n\n".join(
                _format_input(entry, with_raw_memory=full or entry.change != "unchanged")
                for entry in request.inputs
            )
            or "(no inputs)"
        )
        notes = "\n\n".join(_format_note(note) for note in request.notes) or "(no pending notes)"
        removed = "\n".join(f"- {session}" for session in request.removed_sessions) or "(none)"
        text: str = render(
            self._input,
            item_count=len(request.items),
            items=neutralise_tag(items, MEMORY_TAG),
            added_count=counts["added"],
            changed_count=counts["changed"],
            unchanged_count=counts["unchanged"],
            removed_count=len(request.removed_sessions),
            removed_sessions=removed,
            inputs=neutralise_tag(inputs, MEMORY_TAG),
            notes=neutralise_tag(notes, MEMORY_TAG),
        )
        return text

    def consolidate(self, request: ConsolidationRequest) -> ConsolidationAnswer:
        """Ask the model for a plan; raise ``ModelError`` on failure."""
        system, user = self.build_messages(request)
        plan, usage = self._call(system, user, ConsolidationPlan)
        return ConsolidationAnswer(
            plan=plan, model=self.model, prompt_hash=self.prompt_hash, usage=usage
        )
