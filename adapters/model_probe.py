"""`doctor --model`: one small structured request to a phase's model, and what it shows.

The request carries a strict ``json_schema`` response format, as the pipeline's
do. The report names the server (what it says of itself), the model, whether
the answer honoured the schema, how fast the tokens came, and the settings the
pipeline derives for this server (context window, input budget, output cap).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

PROBE_SYSTEM = "You answer with one JSON object and nothing else."
PROBE_USER = (
    'Reply with a JSON object with two fields: "status" set to the string "ready", and '
    '"words" set to the number of words in the phrase "memory for coding agents".\n'
    'Example of the form: {"status": "ready", "words": 7}'
)
PROBE_MAX_TOKENS = 64


class ProbeAnswer(BaseModel):
    """The answer the probe asks for."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ready"]
    words: int


@dataclass
class ProbeReport:
    """What one phase's model showed."""

    phase: str
    model: str
    base_url: str | None
    server: dict[str, Any] = field(default_factory=dict)
    fit: dict[str, Any] = field(default_factory=dict)
    ok: bool = False  # the request got an answer
    schema_honoured: bool = False
    answer: str = ""
    error: str = ""
    seconds: float = 0.0
    output_tokens: int = 0
    tokens_per_second: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "phase": self.phase,
            "model": self.model,
            "base_url": self.base_url,
            "server": self.server,
            "settings": self.fit,
            "answered": self.ok,
            "schema_honoured": self.schema_honoured,
            "answer": self.answer,
            "error": self.error or None,
            "seconds": round(self.seconds, 3),
            "output_tokens": self.output_tokens,
            "tokens_per_second": round(self.tokens_per_second, 2) if self.tokens_per_second is not None else None,
        }


def probe(phase: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> ProbeReport:
    """Send the probe to ``model`` at ``base_url`` and judge its answer."""
    import openai
    from mnemolog.adapters.model_server import discover
    from openai.lib._parsing._completions import type_to_response_format_param

    info = discover(base_url, api_key)
    report = ProbeReport(phase=phase, model=model, base_url=base_url, server=info.as_dict())
    client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url, timeout=timeout, max_retries=0)
    cap = "max_completion_tokens" if base_url is None else "max_tokens"
    started = time.monotonic()
    try:
        completion = client.chat.completions.create(
            model=model,
            messages=[{"role": "system", "content": PROBE_SYSTEM}, {"role": "user", "content": PROBE_USER}],
            response_format=type_to_response_format_param(ProbeAnswer),
            **{cap: PROBE_MAX_TOKENS},
        )
    except openai.APIStatusError as error:
        report.error = f"HTTP {error.status_code}: {error.message}"
        return report
    except openai.APIError as error:
        report.error = f"{type(error).__name__}: {error.message}"
        return report
    finally:
        report.seconds = time.monotonic() - started
    report.ok = True
    choice = completion.choices[0] if completion.choices else None
    content = (choice.message.content or "") if choice is not None else ""
    report.answer = content[:200]
    usage = completion.usage
    report.output_tokens = getattr(usage, "completion_tokens", 0) or 0
    extra = completion.model_extra or {}
    timings = extra.get("timings") if isinstance(extra.get("timings"), dict) else {}
    rate = timings.get("predicted_per_second") if timings else None  # llama.cpp measures generation alone
    if isinstance(rate, (int, float)) and rate > 0:
        report.tokens_per_second = float(rate)
    elif report.output_tokens and report.seconds > 0:
        report.tokens_per_second = report.output_tokens / report.seconds
    try:
        ProbeAnswer.model_validate_json(content)
        report.schema_honoured = True
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        report.error = f"the answer does not follow the JSON schema ({where}: {first.get('msg', '')})"
    return report
