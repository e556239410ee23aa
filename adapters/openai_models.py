"""Phase 1 and phase 2 through the ``openai`` client (any OpenAI-compatible server), and the
prompts and answer checking every model backend shares.

The extractor and consolidator build the prompts and check the answer; how a
request reaches a model is a ``Transport``: by default the ``openai`` client
below; ``anthropic_models`` and ``agent_cli_models`` give the others (chosen
in ``models.BACKENDS``). Every backend's answer goes through the same
``_answer``: the same schema, the same refusal, cut-off and loop checks.

Both adapters send a system message and one user message (phase 2's repair
round adds the model's own plan and the reasons code turned it down) and ask
for structured output: a strict ``json_schema`` response format built from a
pydantic model, the answer validated against the same model. The client's own
retries are off; this module retries 429, 5xx and connection errors with
exponential backoff, and turns everything else into ``ModelError``:

- 4xx other than 429 → ``ModelError(retryable=False)``;
- a time-out → ``ModelError(retryable=True)`` at once, naming the settings to
  change (the same input would time out again);
- an answer that is not JSON, breaks the schema, was cut by the token limit,
  loops or is empty → ``ModelError(retryable=True)``;
- a refusal → ``ModelError(retryable=False)``.

Settings that fit the server (``ModelLimits``): the answer is capped at
``max_output_tokens``; the time-out grows with the input (prompt processing
on a local CPU is slow); a streamed answer (``stream``) reports its progress
and is stopped as soon as it loops (``repetition.loop_period``).

Secret redaction is the caller's job, before and after.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

import openai
import pydantic
from mnemolog.adapters.compact_plan import CompactPlan, from_plan, to_plan
from mnemolog.adapters.repetition import loop_period
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
from openai.lib._parsing._completions import type_to_response_format_param
from pydantic import BaseModel

__all__ = ["ModelLimits", "ModelReply", "OpenAIConsolidator", "OpenAIExtractor", "StreamProgress", "Transport", "strict_schema"]

T = TypeVar("T", bound=BaseModel)

SESSION_TAG = "session_data"
MEMORY_TAG = "memory_data"
LOOP_CHECK_EVERY = 64  # streamed chunks between two loop checks

StreamProgress = Callable[[int, float], None]
"""Told (tokens received so far, seconds since the request) while an answer streams."""


@dataclass(frozen=True)
class ModelLimits:
    """How much a request may send, wait for and get back."""

    max_output_tokens: int = 4_096
    timeout_per_1k_input: float = 2.0  # seconds more per 1,000 input tokens
    stream: bool = False
    max_completion_param: bool = False  # OpenAI's own API wants max_completion_tokens, others max_tokens


@dataclass(frozen=True)
class ModelReply:
    """A model's raw answer, before it is checked: ``finish_reason`` "length" means cut off."""

    content: str
    finish_reason: str | None
    refusal: str | None
    usage: TokenUsage


_Reply = ModelReply


class Transport(Protocol):
    """How one request reaches a model other than through the ``openai`` client."""

    def send(self, messages: list[dict[str, str]], schema: type[BaseModel], timeout: float) -> ModelReply:
        """Send ``messages`` (system first) asking for ``schema``; raise ``ModelError`` on failure."""
        ...


def strict_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``schema`` as OpenAI's strict structured output wants it (every backend sends this one)."""
    response_format: Any = type_to_response_format_param(schema)
    return dict(response_format["json_schema"]["schema"])


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
        limits: ModelLimits = ModelLimits(),
        progress: StreamProgress | None = None,
        transport: Transport | None = None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.model = model
        self.name = model  # the run records which model planned it
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.input_budget_tokens = input_budget_tokens
        self.timeout = timeout
        self.limits = limits
        self.progress = progress
        self._sleep = sleep
        self._system: Prompt = load_prompt(self._system_prompt)
        self._input: Prompt = load_prompt(self._input_prompt)
        self.prompt_hash = combined_hash(self._system, self._input)
        self._transport = transport
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

    def timeout_for(self, input_tokens: int) -> float:
        """Seconds to wait for the answer to begin (streamed) or arrive (not streamed)."""
        return self.timeout + self.limits.timeout_per_1k_input * input_tokens / 1000

    def _call(self, messages: list[dict[str, str]], schema: type[T]) -> tuple[T, TokenUsage]:
        """Send one request, retrying transient failures; return the parsed answer and usage."""
        input_tokens = sum(count_tokens(m["content"]) for m in messages)
        if self._transport is not None:
            return self._answer(self._transport.send(messages, schema, self.timeout_for(input_tokens)), schema)
        attempt = 0
        while True:
            try:
                reply = self._request(messages, schema, input_tokens)
                break
            except openai.APITimeoutError as error:
                waited = self.timeout_for(input_tokens)
                raise ModelError(
                    f"{self.model}: no answer within {waited:.0f} s for ~{input_tokens} input tokens; "
                    "raise model_timeout or model_timeout_per_1k_input, or lower the input budget "
                    "(model_context_tokens, extract_input_tokens)",
                    retryable=True,
                ) from error
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
        return self._answer(reply, schema)

    def _request(self, messages: list[dict[str, str]], schema: type[T], input_tokens: int) -> _Reply:
        cap = "max_completion_tokens" if self.limits.max_completion_param else "max_tokens"
        timeout = self.timeout_for(input_tokens)
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "response_format": type_to_response_format_param(schema),
            cap: self.limits.max_output_tokens,
            "timeout": timeout,
        }
        if not self.limits.stream:
            completion = self._client.chat.completions.create(**arguments)
            choices = completion.choices or []
            if not choices:
                raise ModelError(f"{self.model}: response has no choices", retryable=True)
            message = choices[0].message
            return _Reply(
                content=message.content or "",
                finish_reason=choices[0].finish_reason,
                refusal=getattr(message, "refusal", None),
                usage=_usage(completion.usage),
            )
        return self._streamed(arguments)

    def _streamed(self, arguments: dict[str, Any]) -> _Reply:
        """Read a streamed answer, telling ``progress``; stop it as soon as it loops."""
        started = time.monotonic()
        stream = self._client.chat.completions.create(
            **arguments, stream=True, stream_options={"include_usage": True}
        )
        parts: list[str] = []
        refusal: list[str] = []
        finish: str | None = None
        usage = TokenUsage()
        chunks = 0
        with contextlib.closing(stream):
            for chunk in stream:
                if chunk.usage is not None:
                    usage = _usage(chunk.usage)
                for choice in chunk.choices or []:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        parts.append(delta.content)
                        chunks += 1
                    if delta is not None and getattr(delta, "refusal", None):
                        refusal.append(str(delta.refusal))
                    if choice.finish_reason:
                        finish = choice.finish_reason
                if chunks and chunks % LOOP_CHECK_EVERY == 0:
                    if self.progress is not None:
                        self.progress(chunks, time.monotonic() - started)
                    period = loop_period("".join(parts))
                    if period is not None:
                        raise ModelError(
                            f"{self.model}: the answer looped (the same {period} character(s) over and over); "
                            f"stopped after {chunks} tokens",
                            retryable=True,
                        )
        if self.progress is not None:
            self.progress(chunks, time.monotonic() - started)
        if not usage.output_tokens:
            usage = TokenUsage(input_tokens=usage.input_tokens, output_tokens=chunks)
        return _Reply("".join(parts), finish, "".join(refusal) or None, usage)

    def _answer(self, reply: _Reply, schema: type[T]) -> tuple[T, TokenUsage]:
        if reply.refusal:
            raise ModelError(f"{self.model}: the model refused: {reply.refusal}", retryable=False)
        if reply.finish_reason == "length":
            period = loop_period(reply.content)
            what = f"; it looped (the same {period} character(s) over and over)" if period else ""
            raise ModelError(
                f"{self.model}: answer cut off by the output token limit "
                f"(model_max_output_tokens={self.limits.max_output_tokens}){what}",
                retryable=True,
            )
        if reply.finish_reason == "content_filter":
            raise ModelError(f"{self.model}: answer blocked by a content filter", retryable=False)
        if not reply.content.strip():
            raise ModelError(f"{self.model}: answer has no {schema.__name__} content", retryable=True)
        try:
            parsed = schema.model_validate_json(reply.content)
        except pydantic.ValidationError as error:
            raise ModelError(
                f"{self.model}: answer is not valid {schema.__name__} JSON: "
                f"{error.error_count()} error(s), first: {_first_error(error)}",
                retryable=True,
            ) from error
        return parsed, reply.usage


def _usage(usage: Any) -> TokenUsage:
    return TokenUsage(
        input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
    )


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


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


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
        output, usage = self._call(_messages(system, user), StageOneOutput)
        return ExtractionAnswer(
            output=output,
            model=self.model,
            prompt_hash=self.prompt_hash,
            usage=usage,
            input_tokens_plain=plain_codex_tokens(transcript),
        )


def _format_item(item: ItemForModel) -> str:
    # Each id on a line of its own, labelled the way the answer must repeat it.
    return "\n".join(
        [
            f"## item {item.handle}",
            f"handle: {item.handle}",
            f"kind: {item.kind}",
            f"scope: {item.scope}",
            f"task_group: {item.task_group or '-'}",
            f"title: {item.title}",
            f"keywords: {', '.join(item.keywords)}",
            f"evidence: {', '.join(item.evidence)}",
            f"text: {item.text}",
            *(["written by the user: yes (keep their words; revise the text only when a newer session contradicts it)"] if item.edited_by_user else []),
            *_skill_lines(item),
        ]
    )


def _skill_lines(item: ItemForModel) -> list[str]:
    """A skill's name, steps and what it relies on (the model revises them with the full list)."""
    if item.skill is None:
        return []
    lines = [f"skill name: {item.skill.name}", "steps:"]
    for number, step in enumerate(item.skill.steps, start=1):
        parts = [f"`{step.command}`" if step.command else "", step.action]
        lines.append(f"{number}. " + " - ".join(part for part in parts if part))
    if item.skill.relies_on:
        lines.append(f"relies on: {', '.join(item.skill.relies_on)}")
    return lines


def _format_input(entry: InputForModel, *, with_raw_memory: bool = True) -> str:
    lines = [
        f"## session {entry.session_id}",
        f"session id: {entry.session_id}",
        f"change: {entry.change}",
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
    return "\n".join(
        [f"## note {note.note_id}", f"note id: {note.note_id}", f"intent: {note.intent}", f"scope: {note.scope}", note.text.strip()]
    )


class OpenAIConsolidator(_ChatModel):
    """Phase 2 with an OpenAI-compatible model: a request in, a ``ConsolidationPlan`` out.

    ``compact`` asks for the smallest schema (``compact_plan.CompactPlan``), for
    small local models; the answer is turned into a full plan.
    """

    _system_prompt = "consolidation_system"
    _input_prompt = "consolidation_input"

    def __init__(self, *args: Any, compact: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compact = compact

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
        messages = _messages(system, user)
        if request.repair is not None:
            previous = request.repair.plan
            shown = from_plan(previous).model_dump_json() if self.compact else previous.model_dump_json(exclude_defaults=True)
            problems = "\n".join(f"- {p}" for p in request.repair.problems)
            messages += [
                {"role": "assistant", "content": shown},
                {"role": "user", "content": render(load_prompt("consolidation_repair"), problems=problems)},
            ]
        if self.compact:
            compact, usage = self._call(messages, CompactPlan)
            plan = to_plan(compact)
        else:
            plan, usage = self._call(messages, ConsolidationPlan)
        return ConsolidationAnswer(
            plan=plan, model=self.model, prompt_hash=self.prompt_hash, usage=usage
        )
