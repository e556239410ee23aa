"""Phase 1 through the real openai client against a loopback server, on both backends."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.openai_models import OpenAIExtractor
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.session import session_id_for
from mnemolog.projections.schema import table
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock

ALL = EligibilityPolicy(max_age=None)
GOOD = StageOneOutput(
    rollout_summary="Fixed the flaky retry test; `make test` passes.",
    rollout_slug="fix-retry-test",
    raw_memory="---\ndescription: retry test fix\ntask: fix flaky test\ntask_group: api\ntask_outcome: success\n"
    "cwd: /home/dev/acme/api\nkeywords: make, retry\n---\n### Task 1\nReusable knowledge:\n- run make test\n",
)


def extractor(fake_openai) -> OpenAIExtractor:
    return OpenAIExtractor(model="gpt-test", api_key="test-key", base_url=fake_openai.base_url, max_retries=2, backoff=0.001, max_backoff=0.01)


def session_events(store, native: str) -> list:
    return list(store.app.events.get(session_id_for("codex", native)))


def ingest_one(store, tmp_path: Path, n: int = 1) -> str:
    thread = thread_id(n)
    write_rollout(tmp_path / "s", thread, f"Please fix the flaky retry test number {n}")
    ingest_files(store, [tmp_path / "s"], ALL)
    return thread


def test_a_good_answer_is_stored_with_model_and_usage(store_factory, tmp_path, fake_openai) -> None:
    store = store_factory()
    thread = ingest_one(store, tmp_path)
    fake_openai.queue(GOOD)

    report = extract_all(store, extractor(fake_openai), ALL)

    assert report.as_dict()["extracted"] == 1
    request = fake_openai.requests[0]
    assert request.model == "gpt-test" and request.schema_name
    assert "Please fix the flaky retry test number 1" in request.message("user")
    extracted = session_events(store, thread)[-1]
    assert type(extracted).__name__ == "Extracted"
    assert extracted.model == "gpt-test" and extracted.input_tokens == 100 and extracted.output_tokens == 20
    assert extracted.prompt_hash and extracted.raw_memory == GOOD.raw_memory


def test_a_malformed_answer_fails_then_retries_later(store_factory, tmp_path, fake_openai) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock)
    thread = ingest_one(store, tmp_path)
    before = store.reads().dump()["items"]
    fake_openai.queue("this is not json")

    first = extract_all(store, extractor(fake_openai), ALL)

    assert first.as_dict()["failed"] == 1
    failed = session_events(store, thread)[-1]
    assert type(failed).__name__ == "ExtractionFailed" and failed.attempt == 1 and failed.retry_after is not None
    assert "schema" in failed.error.lower() or "json" in failed.error.lower()
    assert store.reads().dump()["items"] == before

    # Before retry_after nothing is sent; after it, the session is tried again.
    fake_openai.queue(GOOD)
    assert extract_all(store, extractor(fake_openai), ALL).as_dict()["sessions"] == 0
    assert len(fake_openai.requests) == 1
    clock.advance(hours=1)
    second = extract_all(store, extractor(fake_openai), ALL)
    assert second.as_dict()["extracted"] == 1
    assert type(session_events(store, thread)[-1]).__name__ == "Extracted"


def test_a_429_is_retried_after_backoff(store_factory, tmp_path, fake_openai) -> None:
    store = store_factory()
    thread = ingest_one(store, tmp_path)
    fake_openai.queue(status=429, error_message="rate limited")
    fake_openai.queue(GOOD)

    report = extract_all(store, extractor(fake_openai), ALL)

    assert report.as_dict()["extracted"] == 1 and len(fake_openai.requests) == 2
    assert [type(e).__name__ for e in session_events(store, thread)][-2:] == ["ExtractionClaimed", "Extracted"]


def test_after_the_cap_the_session_is_left_failed(store_factory, tmp_path, fake_openai) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock, max_attempts=3)
    thread = ingest_one(store, tmp_path, 1)
    other = ingest_one(store, tmp_path, 2)
    outcomes = []
    for _ in range(4):
        for _ in range(2):
            fake_openai.queue('{"rollout_summary": 1}')  # breaks the schema
        outcomes.append(extract_all(store, extractor(fake_openai), ALL).as_dict())
        clock.advance(days=1)

    assert [o["gave_up"] for o in outcomes[:3]] == [0, 0, 2]
    assert outcomes[3]["sessions"] == 0  # nobody tries again
    for native in (thread, other):
        kinds = [type(e).__name__ for e in session_events(store, native)]
        assert kinds.count("ExtractionFailed") == 3 and "Extracted" not in kinds
    row = store.reads().query(f"SELECT extraction_status, attempts, last_error FROM {table('sessions')} WHERE native_id = ?", [thread])[0]
    assert row["extraction_status"] == "failed" and row["attempts"] == 3 and row["last_error"]
    assert store.reads().dump()["items"] == []


def test_an_empty_answer_withdraws_the_earlier_extraction(store_factory, tmp_path, fake_openai) -> None:
    store = store_factory()
    thread = ingest_one(store, tmp_path)
    fake_openai.queue(GOOD)
    extract_all(store, extractor(fake_openai), ALL)
    path = next((tmp_path / "s").glob("*.jsonl"))
    with path.open("a") as handle:
        handle.write('{"timestamp":"2026-10-20T11:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"bye"}}\n')
    ingest_files(store, [tmp_path / "s"], ALL)
    fake_openai.queue(StageOneOutput(rollout_summary="", rollout_slug=None, raw_memory=""))

    extract_all(store, extractor(fake_openai), ALL)

    assert type(session_events(store, thread)[-1]).__name__ == "ExtractedNothing"
    row = store.reads().query(f"SELECT extraction_status, raw_memory FROM {table('sessions')}")[0]
    assert row == {"extraction_status": "nothing", "raw_memory": None}


def test_secrets_in_the_model_answer_are_redacted(store_factory, tmp_path, fake_openai) -> None:
    store = store_factory()
    thread = ingest_one(store, tmp_path)
    leaked = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
    fake_openai.queue(GOOD.model_copy(update={"raw_memory": GOOD.raw_memory + f"- the key is {leaked}\n"}))

    extract_all(store, extractor(fake_openai), ALL)

    extracted = session_events(store, thread)[-1]
    assert leaked not in extracted.raw_memory and "[REDACTED_SECRET]" in extracted.raw_memory
    assert extracted.redactions >= 1
