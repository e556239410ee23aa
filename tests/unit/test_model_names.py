"""A model name chooses its backend by prefix; any other name is an OpenAI-compatible model."""

from __future__ import annotations

import pytest
from mnemolog.adapters.agent_cli_models import ClaudeCodeTransport, CodexTransport
from mnemolog.adapters.anthropic_models import AnthropicTransport
from mnemolog.adapters.models import make_consolidator, make_extractor, model_endpoint, split_model
from mnemolog.adapters.settings import Settings


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-code:sonnet", ("claude-code", "sonnet")),
        ("codex:gpt-5", ("codex", "gpt-5")),
        ("anthropic:claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("openai:gpt-5", ("openai", "gpt-5")),
        ("gpt-5-mini", ("openai", "gpt-5-mini")),
        ("qwen2.5:1.5b", ("openai", "qwen2.5:1.5b")),  # Ollama's names keep their colon
    ],
)
def test_a_prefix_names_the_backend(name: str, expected: tuple[str, str]) -> None:
    assert split_model(name) == expected


def test_each_phase_gets_its_own_backend() -> None:
    settings = Settings(extract_model="claude-code:sonnet", consolidate_model="codex:gpt-5")

    extractor, consolidator = make_extractor(settings), make_consolidator(settings)

    assert extractor.name == "claude-code:sonnet" and consolidator.name == "codex:gpt-5"  # what the run records
    assert isinstance(extractor._transport, ClaudeCodeTransport) and extractor._transport.model == "sonnet"  # type: ignore[attr-defined]
    assert isinstance(consolidator._transport, CodexTransport) and consolidator._transport.model == "gpt-5"  # type: ignore[attr-defined]


def test_anthropic_takes_its_own_key_and_base_url() -> None:
    settings = Settings(extract_model="anthropic:claude-haiku-4-5", anthropic_api_key="ak", anthropic_base_url="http://a.test",
                        openai_api_key="ok", openai_base_url="http://o.test")

    assert model_endpoint(settings, "extract") == ("http://a.test", "ak")
    assert model_endpoint(settings, "consolidate", "gpt-5") == ("http://o.test", "ok")
    assert isinstance(make_extractor(settings)._transport, AnthropicTransport)  # type: ignore[attr-defined]
    assert make_extractor(settings, "gpt-5")._transport is None  # type: ignore[attr-defined]
