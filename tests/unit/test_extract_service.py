"""The extract service in memory: a scripted extractor, claims, retries and give-up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.ports import ModelError
from mnemolog.domain.services.extract import ClaimPolicy, ExtractOutcome, ExtractReport, extract
from mnemolog.domain.session import Session, SessionFacts
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK, fingerprint
from mnemolog.domain.transcript import ItemKind, TranscriptItem
from support.scripted_models import ScriptedExtractor, memory
from support.stores import FixedClock

ALL = EligibilityPolicy(max_age=None)
CLAIMS = ClaimPolicy(lease=timedelta(minutes=15), max_attempts=2, retry_base=timedelta(minutes=1))
GOOD = memory("Fixed the retry test.", "---\ntask: fix retry test\n---\n### Task 1\nReusable knowledge:\n- run make test\n")


class FakeRedactor:
    def redact(self, text: str) -> tuple[str, int]:
        return text.replace("sk-secret", "[REDACTED_SECRET]"), text.count("sk-secret")

    def redact_transcript(self, transcript):  # type: ignore[no-untyped-def]
        raise AssertionError("extract redacts answers only; transcripts were redacted at ingest")


def recorded(store: Store, native_id: str = "a", *, updated_at: datetime | None = None) -> UUID:
    """A recorded, eligible Codex session (as ingest leaves it)."""
    when = updated_at or datetime(2026, 10, 30, 9, 0, tzinfo=UTC)
    facts = SessionFacts(source="codex", native_id=native_id, path=f"/s/{native_id}.jsonl", cwd="/home/dev/api",
                         scope="git:acme/api", started_at=when, updated_at=when, content_hash=f"h-{native_id}",
                         user_message_count=1, first_user_message="Fix the retry test")
    session = Session(facts=facts, transcript=(TranscriptItem(kind=ItemKind.USER, text="Fix the retry test"),))
    session.assess(True, ())
    store.app.save_all(session)
    session_id: UUID = session.id
    return session_id


def run(store: Store, extractor: ScriptedExtractor, **options: object) -> ExtractReport:
    return extract(store, extractor, FakeRedactor(), ALL, claims=CLAIMS, **options)  # type: ignore[arg-type]


def events(store: Store, session_id: UUID) -> list[str]:
    return [type(e).__name__ for e in store.app.events.get(session_id)]


def test_an_answer_is_stored_scrubbed_of_secrets_and_tombstoned_values(memory_store: Store) -> None:
    digest, width = fingerprint(memory_store.tombstone_key(), "blue falcon")
    memory_store.app.save_all(tombstone := Tombstone(digest=digest, width=width, scope="global", reason="test"))
    session_id = recorded(memory_store)
    answer = memory("Deployed with blue falcon.\nKey sk-secret in use.", GOOD.raw_memory)

    report = run(memory_store, ScriptedExtractor(answer))

    assert report.as_dict() | {"failures": []} == {
        "sessions": 1, "extracted": 1, "nothing": 0, "failed": 0, "gave_up": 0, "skipped": 0,
        "input_tokens": 10, "plain_input_tokens": 0, "failures": [], "waiting": 0, "next_eligible_at": None,
    }
    extracted = memory_store.app.repository.get(session_id).extraction
    # The line the cut left a hole in is gone whole (no memory with a placeholder); the rest stays, redacted.
    assert extracted.rollout_summary == "Key [REDACTED_SECRET] in use."
    assert FORGOTTEN_MARK not in extracted.rollout_summary
    assert extracted.redactions == 1 and extracted.suppressed_by == (tombstone.id,)
    assert events(memory_store, tombstone.id)[-1] == "Suppressed"
    assert memory_store.reads().sessions_to_extract(memory_store.clock()) == []


def test_an_empty_answer_is_nothing_to_keep(memory_store: Store) -> None:
    session_id = recorded(memory_store)
    report = run(memory_store, ScriptedExtractor(StageOneOutput(rollout_summary="", rollout_slug=None, raw_memory="")))
    assert report.count(ExtractOutcome.NOTHING) == 1
    assert events(memory_store, session_id)[-1] == "ExtractedNothing"


def test_a_retryable_failure_is_retried_after_backoff_then_given_up(memory_store: Store) -> None:
    clock: FixedClock = memory_store.clock  # type: ignore[assignment]
    session_id = recorded(memory_store)
    failing = ScriptedExtractor(default=ModelError("rate limited", retryable=True))

    first = run(memory_store, failing)
    assert first.as_dict()["failed"] == 1
    assert first.as_dict()["failures"] == [{"session": str(session_id), "outcome": "failed", "error": "rate limited"}]
    assert run(memory_store, failing).as_dict()["sessions"] == 0  # before retry_after nobody tries

    clock.advance(minutes=2)
    second = run(memory_store, failing)
    assert second.as_dict()["gave_up"] == 1  # the second of max_attempts=2
    clock.advance(days=1)
    assert run(memory_store, failing).as_dict()["sessions"] == 0
    assert events(memory_store, session_id).count("ExtractionFailed") == 2
    assert len(failing.seen) == 2


def test_a_failure_that_cannot_succeed_gives_up_at_once(memory_store: Store) -> None:
    recorded(memory_store)
    report = run(memory_store, ScriptedExtractor(ModelError("context too long", retryable=False)))
    assert report.count(ExtractOutcome.GAVE_UP) == 1


def test_a_session_claimed_by_another_worker_is_skipped_until_the_lease_ends(memory_store: Store) -> None:
    clock: FixedClock = memory_store.clock  # type: ignore[assignment]
    session_id = recorded(memory_store)
    other: Session = memory_store.app.repository.get(session_id)
    other.claim_extraction("other-host:1:1", clock(), timedelta(minutes=15), 3)
    memory_store.app.save_all(other)
    extractor = ScriptedExtractor(default=GOOD)

    busy = run(memory_store, extractor)
    assert busy.count(ExtractOutcome.SKIPPED) == 1 and "claimed by other-host:1:1" in busy.results[0].detail
    assert extractor.seen == []

    clock.advance(minutes=16)  # the other worker crashed: its lease ran out
    assert run(memory_store, extractor).count(ExtractOutcome.EXTRACTED) == 1


def test_a_session_becomes_eligible_once_idle(memory_store: Store) -> None:
    clock: FixedClock = memory_store.clock  # type: ignore[assignment]
    session_id = recorded(memory_store, updated_at=clock() - timedelta(hours=1))
    session: Session = memory_store.app.repository.get(session_id)
    session.assess(False, ("idle less than 6 h",))
    memory_store.app.save_all(session)
    extractor = ScriptedExtractor(default=GOOD)

    assert run(memory_store, extractor).as_dict()["sessions"] == 0
    clock.advance(hours=6)
    assert run(memory_store, extractor).as_dict()["extracted"] == 1


def test_workers_share_the_pending_sessions_and_a_limit_caps_them(memory_store: Store) -> None:
    for n in range(6):
        recorded(memory_store, f"s{n}")
    extractor = ScriptedExtractor(default=GOOD)
    assert run(memory_store, extractor, limit=2).as_dict()["extracted"] == 2
    progress: list[tuple[int, int]] = []
    report = run(memory_store, extractor, workers=3, progress=lambda done, total, _: progress.append((done, total)))
    assert report.as_dict()["extracted"] == 4 and progress[0] == (0, 4) and progress[-1] == (4, 4)


def test_losing_the_race_for_a_claim_skips_the_session(memory_store: Store, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    session_id = recorded(memory_store)
    app, find = memory_store.app, memory_store.app.find

    def racing_find(aggregate_id: UUID) -> object:
        mine = find(aggregate_id)
        theirs: Session = find(aggregate_id)  # another process claims the same version first
        theirs.claim_extraction("other-host:2:2", memory_store.clock(), timedelta(minutes=15), 3)
        app.save_all(theirs)
        return mine

    monkeypatch.setattr(app, "find", racing_find)
    extractor = ScriptedExtractor(default=GOOD)
    report = run(memory_store, extractor)
    assert [(r.outcome, r.detail) for r in report.results] == [(ExtractOutcome.SKIPPED, "claimed by another worker")]
    assert extractor.seen == [] and events(memory_store, session_id).count("ExtractionClaimed") == 1
