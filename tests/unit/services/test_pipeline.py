"""The pipeline service over a store in memory: one run of every phase, and what phase 2 does while another run holds the lease."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from uuid import uuid4

from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.adapters.redaction import SecretRedactor
from mnemolog.adapters.scope import GitScopes
from mnemolog.adapters.session_files import SessionFiles
from mnemolog.adapters.store import Store
from mnemolog.domain.consolidation import PhaseTwoLease
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.pipeline import PipelinePolicy, run_pipeline
from support.sessions import thread_id, write_rollout

OTHER = "other-host:4242:1:1"  # a worker on another host: presumed alive until its lease expires
ANY_AGE = EligibilityPolicy(max_age=None)


@dataclass
class Given:
    """The pipeline's ports, offline, with a wait that lets the other run end after ``ends_after`` waits."""

    store: Store
    ends_after: int = 1
    waits: list[float] = field(default_factory=list)
    source: SessionFiles = field(default_factory=SessionFiles)
    redactor: SecretRedactor = field(default_factory=SecretRedactor)
    scopes: GitScopes = field(default_factory=GitScopes)
    extractor: HeuristicExtractor = field(default_factory=HeuristicExtractor)
    consolidator: HeuristicConsolidator = field(default_factory=HeuristicConsolidator)
    fallback: None = None
    note_files: None = None
    folder: None = None

    def wait(self, seconds: float) -> None:
        self.waits.append(seconds)
        if len(self.waits) == self.ends_after:  # the run holding the lease ends
            lease = self.store.app.repository.get(PhaseTwoLease.create_id())
            lease.release(lease.holder[0])
            self.store.app.save_all(lease)


def _lease_held_elsewhere(store: Store) -> None:
    lease = PhaseTwoLease()
    lease.take(uuid4(), OTHER, store.clock(), timedelta(minutes=30))
    store.app.save_all(lease)


def _session(tmp_path: Path) -> Path:
    return write_rollout(tmp_path / "sessions", thread_id(1), "Always run ruff format before committing.")


def test_one_run_ingests_extracts_and_consolidates(memory_store: Store, tmp_path: Path) -> None:
    ran = run_pipeline(memory_store, Given(memory_store), PipelinePolicy(eligibility=ANY_AGE), [_session(tmp_path)])
    assert (ran.ingest.new, ran.extract.as_dict()["extracted"], ran.consolidate.status) == (1, 1, "completed")
    assert ran.consolidate.added >= 1 and not ran.waited


def test_run_reports_busy_at_once_while_another_run_holds_the_lease(memory_store: Store, tmp_path: Path) -> None:
    _lease_held_elsewhere(memory_store)
    ports = Given(memory_store)
    ran = run_pipeline(memory_store, ports, PipelinePolicy(eligibility=ANY_AGE), [_session(tmp_path)])
    assert ran.consolidate.status == "busy" and OTHER in ran.consolidate.detail
    assert ports.waits == [] and not ran.waited


def test_a_capture_waits_through_the_wait_port_until_the_other_run_ends(memory_store: Store, tmp_path: Path) -> None:
    _lease_held_elsewhere(memory_store)
    ports, told = Given(memory_store, ends_after=3), []
    policy = PipelinePolicy(eligibility=ANY_AGE, sessions_ended=True, busy_wait=60, retry_every=2)
    ran = run_pipeline(memory_store, ports, policy, [_session(tmp_path)], on_wait=told.append)
    assert ran.consolidate.status == "completed" and ran.waited
    assert ports.waits == [2, 2, 2] and len(told) == 1 and OTHER in told[0]


def test_a_capture_gives_up_after_the_longest_wait(memory_store: Store, tmp_path: Path) -> None:
    _lease_held_elsewhere(memory_store)
    ports = Given(memory_store, ends_after=100)
    policy = PipelinePolicy(eligibility=ANY_AGE, sessions_ended=True, busy_wait=5, retry_every=1)
    ran = run_pipeline(memory_store, ports, policy, [_session(tmp_path)])
    assert ran.consolidate.status == "busy" and ports.waits == [1, 1, 1, 1, 1]
