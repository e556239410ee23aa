"""Health of the pipeline: coverage of the recorded sessions per agent and project (``status``, the web page)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from mnemolog.domain.coverage import CoverageReport, coverage, session_coverage
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.unit_of_work import UnitOfWork

__all__ = ["CoverageReport", "SessionOutcome", "coverage_report", "session_outcomes"]


def coverage_report(uow: UnitOfWork, policy: EligibilityPolicy, project: str | None = None) -> CoverageReport:
    """Sessions seen, eligible, waiting (until when), extracted, with nothing, failed (the last error), ineligible
    and excluded, per agent and project (of ``project`` only, when given), judged under ``policy`` now."""
    return coverage(uow.reads().session_states(project), uow.clock(), policy)


def session_outcomes(uow: UnitOfWork, session_ids: Sequence[UUID], policy: EligibilityPolicy) -> list[SessionOutcome]:
    """What each of these sessions gave memory now (``capture``'s log line per session): its state and why."""
    wanted = {sid: n for n, sid in enumerate(session_ids)}
    states = [s for s in uow.reads().session_states() if s.session_id in wanted]
    now = uow.clock()
    return [
        SessionOutcome(s.source, s.native_id, (where := session_coverage(s, now, policy)).state.value, where.reasons)
        for s in sorted(states, key=lambda s: wanted[s.session_id])
    ]


@dataclass(frozen=True)
class SessionOutcome:
    """Where one session stands in phase 1, in the agent's own terms."""

    agent: str
    agent_session_id: str
    state: str  # extracted | nothing | failed | waiting | ineligible | excluded
    reasons: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"agent": self.agent, "session": self.agent_session_id, "state": self.state, "reasons": list(self.reasons)}
