"""Choosing the phase-1 and phase-2 models from settings (the model plugin seam).

A model name may start with a backend: ``claude-code:sonnet``, ``codex:gpt-5``,
``anthropic:claude-sonnet-4-5``, ``openai:gpt-5``; any other name (``gpt-5-mini``,
``qwen2.5:1.5b``) is an OpenAI-compatible model. ``BACKENDS`` maps each prefix
to the factory of its transport (None: the ``openai`` client); the prompts and
the answer checking are the same for all (``openai_models``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.adapters.settings import Settings
from mnemolog.domain.ports import Consolidator, Extractor

if TYPE_CHECKING:
    from mnemolog.adapters.openai_models import ModelLimits, Transport

StreamProgress = Callable[[int, float], None]  # tokens so far, seconds since the request

DEFAULT_EXTRACT_MODEL = "gpt-5-mini"
DEFAULT_CONSOLIDATE_MODEL = "gpt-5"
OFFLINE = "heuristic"
OPENAI = "openai"

TransportFactory = Callable[[Settings, str, str], "Transport | None"]
"""(settings, phase, bare model name) -> the transport, or None for the ``openai`` client."""


def _openai(settings: Settings, phase: str, model: str) -> Transport | None:
    return None


def _anthropic(settings: Settings, phase: str, model: str) -> Transport | None:
    from mnemolog.adapters.anthropic_models import (
        AnthropicTransport,  # the SDK costs time to import
    )

    base_url, key = model_endpoint(settings, phase, f"anthropic:{model}")
    return AnthropicTransport(
        model, key, base_url,
        max_output_tokens=settings.model_max_output_tokens,
        max_retries=settings.model_retries,
        backoff=settings.model_backoff,
    )


def _claude_code(settings: Settings, phase: str, model: str) -> Transport | None:
    from mnemolog.adapters.agent_cli_models import ClaudeCodeTransport

    return ClaudeCodeTransport(model)


def _codex(settings: Settings, phase: str, model: str) -> Transport | None:
    from mnemolog.adapters.agent_cli_models import CodexTransport

    return CodexTransport(model)


BACKENDS: dict[str, TransportFactory] = {
    OPENAI: _openai,
    "anthropic": _anthropic,
    "claude-code": _claude_code,
    "codex": _codex,
}


def split_model(name: str) -> tuple[str, str]:
    """(backend, model): ``claude-code:sonnet`` -> ("claude-code", "sonnet"); a name without a known prefix is OpenAI's."""
    prefix, colon, rest = name.partition(":")
    if colon and prefix in BACKENDS:
        return prefix, rest
    return OPENAI, name


def _backend(settings: Settings, phase: str, name: str | None = None) -> str:
    chosen = name or getattr(settings, f"{phase}_model")
    return split_model(chosen)[0] if chosen not in ("auto", OFFLINE) else OPENAI


def _key(settings: Settings, phase: str, name: str | None = None) -> str | None:
    specific = getattr(settings, f"{phase}_api_key")
    backend = _backend(settings, phase, name)
    if backend in ("claude-code", "codex"):
        return None  # the CLI signs in itself
    chosen = specific or (settings.anthropic_api_key if backend == "anthropic" else settings.openai_api_key)
    return chosen.get_secret_value() if chosen is not None else None


def _base_url(settings: Settings, phase: str, name: str | None = None) -> str | None:
    backend = _backend(settings, phase, name)
    if backend in ("claude-code", "codex"):
        return None
    shared = settings.anthropic_base_url if backend == "anthropic" else settings.openai_base_url
    return str(getattr(settings, f"{phase}_base_url") or shared or "") or None


def model_endpoint(settings: Settings, phase: str, name: str | None = None) -> tuple[str | None, str | None]:
    """A phase's base URL (None: the backend's own API, or a CLI) and API key, for model ``name`` or the configured one."""
    return _base_url(settings, phase, name), _key(settings, phase, name)


def model_choice(settings: Settings, phase: str, name: str | None = None) -> str:
    """The model a phase will use: the name given, the configured one, or 'auto'.

    'auto' means the default OpenAI model when an API key or a base URL is
    configured, else the offline heuristic.
    """
    chosen = name or getattr(settings, f"{phase}_model")
    if chosen == "auto":
        has_endpoint = _key(settings, phase, OPENAI + ":") is not None or _base_url(settings, phase, OPENAI + ":") is not None
        if not has_endpoint:
            return OFFLINE
        return DEFAULT_EXTRACT_MODEL if phase == "extract" else DEFAULT_CONSOLIDATE_MODEL
    return str(chosen)


LOCAL_TIMEOUT_PER_1K = 20.0  # seconds per 1,000 input tokens: prompt processing on a CPU
HOSTED_TIMEOUT_PER_1K = 2.0
CONTEXT_SHARE = 0.85  # our tokenizer is not the model's: leave room for the difference


@dataclass(frozen=True)
class ModelFit:
    """How a phase's requests fit its server: input budget, answer cap, time-outs, streaming."""

    base_url: str | None
    context_window: int | None
    input_budget: int
    limits: ModelLimits
    compact: bool = False  # phase 2 asks for the compact plan schema

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (``doctor --model``)."""
        return {
            "context_window": self.context_window,
            "input_budget": self.input_budget,
            "max_output_tokens": self.limits.max_output_tokens,
            "stream": self.limits.stream,
            "timeout_per_1k_input": self.limits.timeout_per_1k_input,
            "plan_schema": "compact" if self.compact else "full",
        }


def model_fit(settings: Settings, phase: str, *, ask_server: bool = True, name: str | None = None) -> ModelFit:
    """The input budget from the context window (the server's word, else ``model_context_tokens``), and the limits.

    The answer cap never takes more than a third of a known context window.
    """
    from mnemolog.adapters.model_server import discover, is_local
    from mnemolog.adapters.openai_models import ModelLimits

    backend = _backend(settings, phase, name)
    base_url = _base_url(settings, phase, name)
    local = backend == OPENAI and is_local(base_url)  # a small model on a CPU: only OpenAI-compatible servers are
    context = settings.model_context_tokens
    if ask_server and base_url and backend == OPENAI:
        context = discover(base_url, _key(settings, phase, name)).context_window or context
    configured = settings.extract_input_tokens if phase == "extract" else settings.consolidate_input_tokens
    output_cap = settings.model_max_output_tokens
    budget = configured
    if context:
        output_cap = max(256, min(output_cap, context // 3))
        budget = max(512, min(configured, int((context - output_cap) * CONTEXT_SHARE)))
    per_1k = settings.model_timeout_per_1k_input
    if per_1k is None:
        per_1k = LOCAL_TIMEOUT_PER_1K if local else HOSTED_TIMEOUT_PER_1K
    stream = settings.model_stream if settings.model_stream is not None else local
    limits = ModelLimits(
        max_output_tokens=output_cap,
        timeout_per_1k_input=per_1k,
        stream=stream,
        max_completion_param=base_url is None and backend == OPENAI,
    )
    compact = settings.model_schema == "compact" or (settings.model_schema == "auto" and local)
    return ModelFit(base_url=base_url, context_window=context, input_budget=budget, limits=limits, compact=compact)


def extract_workers(settings: Settings, requested: int | None = None) -> int:
    """Phase-1 workers: as asked, else ``extract_workers`` capped by ``model_concurrency`` (1 for a local server)."""
    if requested:
        return requested
    from mnemolog.adapters.model_server import is_local

    if model_choice(settings, "extract") == OFFLINE:
        return settings.extract_workers
    concurrency = settings.model_concurrency
    if concurrency is None:
        concurrency = 1 if is_local(_base_url(settings, "extract")) else settings.extract_workers
    return max(1, min(settings.extract_workers, concurrency))


def make_extractor(settings: Settings, name: str | None = None) -> Extractor:
    """The phase-1 model."""
    chosen = model_choice(settings, "extract", name)
    if chosen == OFFLINE:
        return HeuristicExtractor()
    from mnemolog.adapters.openai_models import (
        OpenAIExtractor,  # the openai client costs ~0.3 s to import
    )

    fit = model_fit(settings, "extract", name=chosen)
    backend, bare = split_model(chosen)
    return OpenAIExtractor(
        model=bare if backend == OPENAI else chosen,
        transport=BACKENDS[backend](settings, "extract", bare),
        api_key=_key(settings, "extract", chosen),
        base_url=fit.base_url,
        timeout=settings.model_timeout,
        max_retries=settings.model_retries,
        backoff=settings.model_backoff,
        input_budget_tokens=fit.input_budget,
        limits=fit.limits,
    )


def fallback_consolidator(settings: Settings, name: str | None = None) -> Consolidator | None:
    """The offline consolidator, when phase 2 uses a language model (it plans a run the model's plans cannot)."""
    return None if model_choice(settings, "consolidate", name) == OFFLINE else HeuristicConsolidator()


def make_consolidator(settings: Settings, name: str | None = None, progress: StreamProgress | None = None) -> Consolidator:
    """The phase-2 model; ``progress`` is told how a streamed answer advances."""
    chosen = model_choice(settings, "consolidate", name)
    if chosen == OFFLINE:
        return HeuristicConsolidator()
    from mnemolog.adapters.openai_models import OpenAIConsolidator

    fit = model_fit(settings, "consolidate", name=chosen)
    backend, bare = split_model(chosen)
    return OpenAIConsolidator(
        model=bare if backend == OPENAI else chosen,
        transport=BACKENDS[backend](settings, "consolidate", bare),
        api_key=_key(settings, "consolidate", chosen),
        base_url=fit.base_url,
        timeout=settings.model_timeout,
        max_retries=settings.model_retries,
        backoff=settings.model_backoff,
        input_budget_tokens=fit.input_budget,
        limits=fit.limits,
        progress=progress,
        compact=fit.compact,
    )
