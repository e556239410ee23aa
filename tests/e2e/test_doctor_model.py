"""`doctor --model` against the scripted OpenAI-compatible server: server, model, schema support, speed."""

from __future__ import annotations

from pathlib import Path

from support.cli import run_cli
from support.fake_openai import FakeOpenAI


def _env(tmp_path: Path, server: FakeOpenAI) -> dict[str, str]:
    return {"MNEMOLOG_HOME": str(tmp_path), "OPENAI_BASE_URL": server.base_url, "MNEMOLOG_EXTRACT_MODEL": "small-model",
            "MNEMOLOG_CONSOLIDATE_MODEL": "small-model"}


def test_a_server_that_honours_the_schema(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.context_window = 8192
    fake_openai.queue({"status": "ready", "words": 4}, usage=(40, 12))

    result = run_cli("doctor", "--model", "--json", env=_env(tmp_path, fake_openai))

    assert result.code == 0, result.err
    extract, consolidate = result.json()["models"]
    assert extract == {**consolidate, "phase": "extract"}  # one request for one server and model
    assert extract["model"] == "small-model" and extract["base_url"] == fake_openai.base_url
    assert extract["server"] == {"kind": "llama.cpp", "models": ["fake-model"], "context_window": 8192}
    assert extract["schema_honoured"] is True and extract["output_tokens"] == 12 and extract["tokens_per_second"] > 0
    assert extract["settings"]["context_window"] == 8192 and extract["settings"]["input_budget"] < 8192
    assert extract["settings"]["stream"] is True  # a local base URL
    [request] = fake_openai.requests
    assert request.response_format["type"] == "json_schema" and request.schema_name == "ProbeAnswer"
    assert request.body["max_tokens"] == 64


def test_a_server_that_ignores_the_schema(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.queue("Sure! Here is the JSON you asked for: ready, 4 words.")

    result = run_cli("doctor", "--model", env=_env(tmp_path, fake_openai))

    assert result.code == 3, result.out + result.err
    assert "JSON schema honoured: no" in result.out
    assert "tokens/s" in result.out and "context window unknown (set model_context_tokens)" in result.out


def test_a_server_that_cannot_be_reached(tmp_path: Path) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "MNEMOLOG_CONSOLIDATE_MODEL": "m",
           "MNEMOLOG_EXTRACT_MODEL": "heuristic"}

    result = run_cli("doctor", "--model", env=env)

    assert result.code == 1
    assert "offline heuristic model" in result.out and "request    failed: APIConnectionError" in result.out
