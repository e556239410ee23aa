"""Settings that fit the server: the context window, the output cap, time-outs, streaming, a looping answer, concurrency."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from mnemolog.adapters.model_server import discover, is_local
from mnemolog.adapters.models import extract_workers, model_fit
from mnemolog.adapters.openai_models import ModelLimits, OpenAIExtractor
from mnemolog.adapters.repetition import loop_period
from mnemolog.adapters.settings import Settings
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.ports import ModelError
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript, TranscriptItem
from support.fake_openai import FakeOpenAI

ANSWER = StageOneOutput(rollout_summary="Ran the tests.", rollout_slug="tests", raw_memory="- uv run pytest works")
SESSION = Transcript(
    meta=SessionMeta(source="codex", native_id="0194f5a6-89ab-7cde-8123-456789abcdef", path="/x/r.jsonl", cwd="/work/repo",
                     started_at=datetime(2025, 2, 11, 15, 35, tzinfo=UTC)),
    items=(TranscriptItem(kind=ItemKind.USER, text="Run the tests with uv please."),),
)


def _extractor(server: FakeOpenAI, limits: ModelLimits, progress: list[tuple[int, float]] | None = None) -> OpenAIExtractor:
    told = progress.append if progress is not None else None
    return OpenAIExtractor(model="small", api_key=None, base_url=server.base_url, timeout=5.0, max_retries=0,
                           limits=limits, progress=(lambda t, s: told((t, s))) if told else None)


def test_a_streamed_answer_parses_like_a_whole_one_and_reports_progress(fake_openai: FakeOpenAI) -> None:
    fake_openai.chunk_chars = 1  # one character a chunk: many progress reports
    fake_openai.queue(ANSWER, usage=(321, 45))
    told: list[tuple[int, float]] = []

    answer = _extractor(fake_openai, ModelLimits(max_output_tokens=300, stream=True), told).extract(SESSION)

    assert answer.output == ANSWER and (answer.usage.input_tokens, answer.usage.output_tokens) == (321, 45)
    [request] = fake_openai.requests
    assert request.body["stream"] is True and request.body["max_tokens"] == 300
    assert request.schema_name == "StageOneOutput"
    assert told and told[-1][0] == len(ANSWER.model_dump_json())


def test_a_looping_answer_is_stopped_while_it_streams(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue('{"rollout_summary": "' + "tests pass. " * 2000)

    with pytest.raises(ModelError, match=r"the answer looped \(the same 12 character\(s\) over and over\); stopped after \d+ tokens") as caught:
        _extractor(fake_openai, ModelLimits(stream=True)).extract(SESSION)

    assert caught.value.retryable is True


def test_a_cut_off_answer_names_the_cap_and_whether_it_looped(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue('{"rollout_summary": "' + "ab" * 400, finish_reason="length")

    with pytest.raises(ModelError, match=r"cut off by the output token limit \(model_max_output_tokens=128\); it looped"):
        _extractor(fake_openai, ModelLimits(max_output_tokens=128)).extract(SESSION)


def test_the_timeout_grows_with_the_input() -> None:
    model = OpenAIExtractor(model="m", api_key="k", base_url="http://127.0.0.1:9/v1", timeout=60.0,
                            limits=ModelLimits(timeout_per_1k_input=20.0))
    assert model.timeout_for(0) == 60.0 and model.timeout_for(6_500) == 60.0 + 130.0


def test_loop_period_tells_a_loop_from_a_long_answer() -> None:
    assert loop_period("x" * 500) == 1
    assert loop_period('{"a": 1}' + ', "retry"' * 100) == 9
    assert loop_period(" ".join(f"edit {n} says something new" for n in range(100))) is None
    assert loop_period("short") is None


def test_the_budget_and_the_cap_follow_the_servers_context_window(fake_openai: FakeOpenAI) -> None:
    fake_openai.context_window = 4096
    settings = Settings(openai_base_url=fake_openai.base_url, extract_model="m", consolidate_model="m", model_max_output_tokens=4096)

    extract, consolidate = model_fit(settings, "extract"), model_fit(settings, "consolidate")

    assert discover(fake_openai.base_url).context_window == 4096
    assert extract.context_window == 4096 and extract.limits.max_output_tokens == 4096 // 3
    assert extract.input_budget == int((4096 - 4096 // 3) * 0.85) == consolidate.input_budget
    assert extract.limits.stream is True and consolidate.compact is True  # a local server
    assert extract.limits.timeout_per_1k_input == 20.0


def test_a_silent_server_leaves_the_context_window_to_the_setting(fake_openai: FakeOpenAI) -> None:
    settings = Settings(openai_base_url=fake_openai.base_url, extract_model="m", model_context_tokens=32_768)

    fit = model_fit(settings, "extract")

    assert fit.context_window == 32_768 and fit.input_budget == settings.extract_input_tokens  # 24k fits in 32k
    assert model_fit(Settings(openai_base_url=fake_openai.base_url, extract_model="m"), "extract").context_window is None


def test_one_request_at_a_time_for_a_local_server() -> None:
    local = Settings(openai_base_url="http://127.0.0.1:8080/v1", extract_model="m", extract_workers=4)
    hosted = Settings(openai_base_url="https://api.example.com/v1", extract_model="m", extract_workers=4)
    assert is_local("http://localhost:11434/v1") and is_local("http://192.168.1.20:8000/v1") and not is_local(None)
    assert extract_workers(local) == 1 and extract_workers(hosted) == 4
    assert extract_workers(local.model_copy(update={"model_concurrency": 2})) == 2
    assert extract_workers(local, requested=3) == 3  # --workers wins
    hosted_fit = model_fit(hosted, "extract", ask_server=False)
    assert hosted_fit.limits.stream is False and hosted_fit.compact is False and hosted_fit.limits.timeout_per_1k_input == 2.0


def test_a_time_out_is_reported_at_once_with_what_to_change(fake_openai: FakeOpenAI) -> None:
    fake_openai.queue(ANSWER, delay=3.0)
    model = OpenAIExtractor(model="small", api_key=None, base_url=fake_openai.base_url, timeout=1.0, max_retries=3,
                            backoff=0.01, limits=ModelLimits(timeout_per_1k_input=0.0))

    with pytest.raises(ModelError, match=r"small: no answer within 1 s for ~\d+ input tokens; raise model_timeout") as caught:
        model.extract(SESSION)

    assert caught.value.retryable is True and len(fake_openai.requests) == 1  # the same input would time out again
