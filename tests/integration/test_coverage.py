"""Coverage and retrying failed extractions, through the real openai client on loopback, on both backends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from mnemolog.adapters.openai_models import OpenAIExtractor
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.services.status import coverage_report
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
    return OpenAIExtractor(model="gpt-test", api_key="k", base_url=fake_openai.base_url, max_retries=0, backoff=0.001, max_backoff=0.01)


def test_failed_sessions_show_their_error_and_are_extracted_when_retried(store_factory, tmp_path: Path, fake_openai) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock)
    for n in (1, 2):
        write_rollout(tmp_path / "s", thread_id(n), f"Please fix the flaky retry test number {n}")
    ingest_files(store, [tmp_path / "s"], ALL)
    fake_openai.queue(status=401, error_message="Incorrect API key provided")
    fake_openai.queue(status=401, error_message="Incorrect API key provided")

    failed = extract_all(store, extractor(fake_openai))

    assert failed.as_dict()["gave_up"] == 2
    assert extract_all(store, extractor(fake_openai)).as_dict()["sessions"] == 0  # a plain extract no longer takes them
    report = coverage_report(store, ALL)
    (group,) = report.groups
    assert (group.agent, group.project) == ("codex", "git:github.com/acme/api")
    assert (group.seen, group.eligible, group.failed, group.extracted, group.waiting) == (2, 2, 2, 0, 0)
    assert group.last_error is not None and "401" in group.last_error and "Unauthorized" in group.last_error

    fake_openai.queue(GOOD)
    fake_openai.queue(GOOD)
    retried = extract_all(store, extractor(fake_openai), retry_failed=True)

    assert retried.as_dict()["extracted"] == 2
    after = coverage_report(store, ALL).as_dict()["total"]
    assert (after["seen"], after["extracted"], after["failed"], after["last_error"]) == (2, 2, 0, None)
    assert extract_all(store, extractor(fake_openai), retry_failed=True).as_dict()["sessions"] == 0


def test_waiting_sessions_say_until_when_and_old_ones_are_ineligible(store_factory, tmp_path: Path) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock)
    recent = clock.now - timedelta(hours=1)
    write_rollout(tmp_path / "s", thread_id(1), "A session still going on", when=recent.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    write_rollout(tmp_path / "s", thread_id(2), "An old session", when="2025-01-05T10:00:00.000Z")
    policy = EligibilityPolicy(idle=timedelta(hours=6), max_age=timedelta(days=10))
    ingest_files(store, [tmp_path / "s"], policy)

    total = coverage_report(store, policy).total

    assert (total.seen, total.waiting, total.ready, total.ineligible, total.eligible) == (2, 1, 0, 1, 1)
    assert total.waiting_until is not None
    assert abs(total.waiting_until - (recent.replace(microsecond=0) + timedelta(hours=6))) < timedelta(seconds=1)
    assert total.reasons == {"older than 10 days": 1}
    clock.advance(hours=6)
    assert coverage_report(store, policy).total.ready == 1  # idle long enough now: the next extract takes it
