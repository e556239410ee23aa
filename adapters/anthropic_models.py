"""The ``anthropic`` backend: Anthropic's Messages API through the official ``anthropic`` SDK.

Structured output through one forced tool: the request offers a single tool,
``answer``, whose input schema is the answer's (the strict schema every
backend sends), with ``tool_choice`` naming it; the tool call's input is the
answer, checked by ``openai_models`` like any other backend's. The SDK's own
retries are off; 429, 529 (overloaded), 5xx and connection errors are retried
here with exponential backoff, at least as long as ``retry-after`` says.
A refusal (``stop_reason: refusal``) and 4xx are not retried; 401/403 name
the key to check.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import anthropic
from mnemolog.adapters.openai_models import ModelReply, strict_schema
from mnemolog.domain.extraction import TokenUsage
from mnemolog.domain.ports import ModelError
from pydantic import BaseModel

TOOL = "answer"


class AnthropicTransport:
    """One Messages API request per call, retried on transient failures."""

    def __init__(
        self,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        *,
        max_output_tokens: int = 4_096,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._sleep = sleep
        self._client = anthropic.Anthropic(api_key=api_key or "not-set", base_url=base_url, max_retries=0)

    def send(self, messages: list[dict[str, str]], schema: type[BaseModel], timeout: float) -> ModelReply:
        """Ask for ``schema`` through the forced ``answer`` tool; raise ``ModelError`` on failure."""
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]
        tool = {"name": TOOL, "description": f"Give the {schema.__name__} answer.", "input_schema": strict_schema(schema)}
        arguments: dict[str, Any] = {
            "model": self.model,
            "system": system,
            "messages": turns,
            "tools": [tool],
            "tool_choice": {"type": "tool", "name": TOOL},
            "max_tokens": self.max_output_tokens,
            "timeout": timeout,
        }
        attempt = 0
        while True:
            try:
                return _reply(self._client.messages.create(**arguments))
            except anthropic.APITimeoutError as error:
                raise ModelError(f"anthropic:{self.model}: no answer within {timeout:.0f} s; raise model_timeout", retryable=True) from error
            except anthropic.APIStatusError as error:
                if not (error.status_code == 429 or error.status_code >= 500):
                    raise ModelError(f"anthropic:{self.model}: {_rejected(error)}", retryable=False) from error
                transient: anthropic.APIError = error
            except anthropic.APIConnectionError as error:
                transient = error
            if attempt >= self.max_retries:
                raise ModelError(f"anthropic:{self.model}: gave up after {attempt + 1} attempt(s): {_describe(transient)}", retryable=True) from transient
            self._sleep(self._delay(attempt, transient))
            attempt += 1

    def _delay(self, attempt: int, error: anthropic.APIError) -> float:
        delay = self.backoff * (2.0**attempt)
        if isinstance(error, anthropic.APIStatusError):
            retry_after = error.response.headers.get("retry-after")
            if retry_after:
                with contextlib.suppress(ValueError):
                    delay = max(delay, float(retry_after))
        return min(delay, self.max_backoff)


def _reply(message: Any) -> ModelReply:
    usage = TokenUsage(
        input_tokens=getattr(message.usage, "input_tokens", 0) or 0,
        output_tokens=getattr(message.usage, "output_tokens", 0) or 0,
    )
    stop = message.stop_reason
    text = "".join(getattr(block, "text", "") for block in message.content if block.type == "text")
    if stop == "refusal":
        return ModelReply("", stop, text or "stop_reason refusal", usage)
    answer = next((block.input for block in message.content if block.type == "tool_use" and block.name == TOOL), None)
    content = json.dumps(answer) if answer is not None else text
    return ModelReply(content, "length" if stop == "max_tokens" else stop, None, usage)


def _rejected(error: anthropic.APIStatusError) -> str:
    """"401 Unauthorized from the Anthropic API: <its message>" and what to check."""
    try:
        phrase = HTTPStatus(error.status_code).phrase
    except ValueError:
        phrase = "error"
    body = error.body.get("error") if isinstance(error.body, dict) else None
    said = body.get("message") if isinstance(body, dict) else None
    hint = " (check ANTHROPIC_API_KEY, or MNEMOLOG_EXTRACT_API_KEY / MNEMOLOG_CONSOLIDATE_API_KEY)" if error.status_code in (401, 403) else ""
    return f"{error.status_code} {phrase} from the Anthropic API: {said or error.message}{hint}"


def _describe(error: anthropic.APIError) -> str:
    if isinstance(error, anthropic.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    return f"{type(error).__name__}: {error.message}"
