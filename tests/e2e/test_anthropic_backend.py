"""The ``anthropic:`` backend against a loopback Messages API server (the scripted one, answering unstreamed).

Extraction and consolidation through ``mnemolog run``, the structured output
through one forced ``answer`` tool; a refusal is not retried; a 429 waits as
long as ``retry-after`` says; a 401 is one clear line naming the key.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.anthropic_models import AnthropicTransport
from mnemolog.adapters.models import make_extractor
from mnemolog.adapters.session_files import read_session
from mnemolog.adapters.settings import Settings
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.ports import ModelError
from support.agent_model_server import AgentModelServer, Recorded, Reply, ToolCall
from support.agent_sessions import ClaudeSession
from support.cli import run_cli
from support.memory_model import RULE, RULE_ITEM, answer_for

KEY = "sk-ant-test-key-0001"


class Script:
    """Answers the forced tool's schema; ``first`` replies go out before that (errors, a refusal)."""

    def __init__(self) -> None:
        self.first: list[Reply] = []

    def __call__(self, request: Recorded) -> Reply:
        if self.first:
            return self.first.pop(0)
        tool = (request.body.get("tools") or [{}])[0]
        answer = answer_for(tool.get("input_schema") or {}, request.text)
        return Reply(tool_call=ToolCall(tool.get("name", "answer"), answer)) if answer is not None else Reply(text="?")


@pytest.fixture
def server() -> Iterator[tuple[AgentModelServer, Script]]:
    script = Script()
    with AgentModelServer(script) as running:
        yield running, script


def _session(folder: Path, cwd: Path) -> Path:
    cwd.mkdir(parents=True, exist_ok=True)
    start = datetime.now(UTC) - timedelta(days=2)
    return ClaudeSession(3, start, str(cwd)).user(RULE).say("I will run make lint-zz8 before every push.").write(folder)


def _env(tmp_path: Path, server: AgentModelServer) -> dict[str, str]:
    return {"MNEMOLOG_HOME": str(tmp_path / "store"), "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": KEY,
            "MNEMOLOG_EXTRACT_MODEL": "anthropic:claude-test-1", "MNEMOLOG_CONSOLIDATE_MODEL": "anthropic:claude-test-1"}


def test_run_extracts_and_consolidates_through_the_messages_api(tmp_path: Path, server: tuple[AgentModelServer, Script]) -> None:
    running, _ = server
    path = _session(tmp_path / "sessions", tmp_path / "work" / "alpha")

    done = run_cli("run", "--all", str(path.parent), "--json", env=_env(tmp_path, running))

    assert done.code == 0, done.out + done.err
    report = done.json()
    assert report["extract"]["extracted"] == 1 and report["consolidate"]["fallback"] is None, report
    shown = run_cli("search", "lint-zz8", "--json", env=_env(tmp_path, running), cwd=tmp_path / "work" / "alpha").json()
    assert [hit["text"] for hit in shown["hits"] if hit["type"] == "item"] == [RULE_ITEM]
    assert [hit["type"] for hit in shown["hits"]] == ["item", "excerpt"]  # the memory first, then the chat it came from
    extraction, plan = running.requests
    for request, field in ((extraction, "rollout_summary"), (plan, "edits")):
        assert request.path.startswith("/v1/messages")
        assert KEY in (request.headers.get("x-api-key"), request.headers.get("authorization", "").removeprefix("Bearer "))
        assert request.body["model"] == "claude-test-1" and request.body["tool_choice"] == {"type": "tool", "name": "answer"}
        [tool] = request.body["tools"]
        assert field in tool["input_schema"]["properties"]
        assert request.body["system"] and request.body["messages"][0]["role"] == "user"
    assert "make lint-zz8 before you push" in extraction.text


def _extractor(server: AgentModelServer, **settings: Any) -> Any:
    return make_extractor(Settings(extract_model="anthropic:claude-test-1", anthropic_base_url=server.base_url,
                                   anthropic_api_key=KEY, model_backoff=0.0, **settings))


def test_a_refusal_is_reported_and_not_retried(tmp_path: Path, server: tuple[AgentModelServer, Script]) -> None:
    running, script = server
    script.first = [Reply(text="I can't help with that.", stop_reason="refusal")]
    transcript = read_session(_session(tmp_path, tmp_path / "work"))

    with pytest.raises(ModelError) as raised:
        _extractor(running).extract(transcript)

    assert raised.value.retryable is False
    assert "refused" in str(raised.value) and "I can't help with that." in str(raised.value)
    assert len(running.requests) == 1


def test_a_429_waits_as_long_as_retry_after_says(server: tuple[AgentModelServer, Script]) -> None:
    running, script = server
    script.first = [Reply(status=429, error="rate limited", headers={"retry-after": "7"})]
    waited: list[float] = []
    transport = AnthropicTransport("claude-test-1", KEY, running.base_url, backoff=0.5, sleep=waited.append)

    reply = transport.send([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], StageOneOutput, 30)

    assert waited == [7.0]
    assert StageOneOutput.model_validate_json(reply.content).rollout_slug == "lint-rule"
    assert len(running.requests) == 2


def test_a_401_is_one_clear_line_naming_the_key(tmp_path: Path, server: tuple[AgentModelServer, Script]) -> None:
    running, script = server
    script.first = [Reply(status=401, error="invalid x-api-key")] * 3
    transcript = read_session(_session(tmp_path, tmp_path / "work"))

    with pytest.raises(ModelError) as raised:
        _extractor(running).extract(transcript)

    message = str(raised.value)
    assert raised.value.retryable is False and "\n" not in message
    assert message.startswith("anthropic:claude-test-1: 401 Unauthorized from the Anthropic API: invalid x-api-key")
    assert "ANTHROPIC_API_KEY" in message
    assert len(running.requests) == 1
