"""Choosing the phase-1 and phase-2 models from settings (the model plugin seam)."""

from __future__ import annotations

from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.adapters.settings import Settings
from mnemolog.domain.ports import Consolidator, Extractor

DEFAULT_EXTRACT_MODEL = "gpt-5-mini"
DEFAULT_CONSOLIDATE_MODEL = "gpt-5"
OFFLINE = "heuristic"


def _key(settings: Settings, phase: str) -> str | None:
    specific = getattr(settings, f"{phase}_api_key")
    chosen = specific or settings.openai_api_key
    return chosen.get_secret_value() if chosen is not None else None


def _base_url(settings: Settings, phase: str) -> str | None:
    return str(getattr(settings, f"{phase}_base_url") or settings.openai_base_url or "") or None


def model_choice(settings: Settings, phase: str, name: str | None = None) -> str:
    """The model a phase will use: the name given, the configured one, or 'auto'.

    'auto' means the default OpenAI model when an API key or a base URL is
    configured, else the offline heuristic.
    """
    chosen = name or getattr(settings, f"{phase}_model")
    if chosen == "auto":
        has_endpoint = _key(settings, phase) is not None or _base_url(settings, phase) is not None
        if not has_endpoint:
            return OFFLINE
        return DEFAULT_EXTRACT_MODEL if phase == "extract" else DEFAULT_CONSOLIDATE_MODEL
    return str(chosen)


def make_extractor(settings: Settings, name: str | None = None) -> Extractor:
    """The phase-1 model."""
    chosen = model_choice(settings, "extract", name)
    if chosen == OFFLINE:
        return HeuristicExtractor()
    from mnemolog.adapters.openai_models import (
        OpenAIExtractor,  # the openai client costs ~0.3 s to import
    )

    return OpenAIExtractor(
        model=chosen,
        api_key=_key(settings, "extract"),
        base_url=_base_url(settings, "extract"),
        timeout=settings.model_timeout,
        max_retries=settings.model_retries,
        backoff=settings.model_backoff,
        input_budget_tokens=settings.extract_input_tokens,
    )


def make_consolidator(settings: Settings, name: str | None = None) -> Consolidator:
    """The phase-2 model."""
    chosen = model_choice(settings, "consolidate", name)
    if chosen == OFFLINE:
        return HeuristicConsolidator()
    from mnemolog.adapters.openai_models import OpenAIConsolidator

    return OpenAIConsolidator(
        model=chosen,
        api_key=_key(settings, "consolidate"),
        base_url=_base_url(settings, "consolidate"),
        timeout=settings.model_timeout,
        max_retries=settings.model_retries,
        backoff=settings.model_backoff,
    )
