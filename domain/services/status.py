"""Health of the pipeline: coverage of the recorded sessions per agent and project (``status``, the web page)."""

from __future__ import annotations

from mnemolog.domain.coverage import CoverageReport, coverage
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.unit_of_work import UnitOfWork

__all__ = ["CoverageReport", "coverage_report"]


def coverage_report(uow: UnitOfWork, policy: EligibilityPolicy, project: str | None = None) -> CoverageReport:
    """Sessions seen, eligible, waiting (until when), extracted, with nothing, failed (the last error), ineligible
    and excluded, per agent and project (of ``project`` only, when given), judged under ``policy`` now."""
    return coverage(uow.reads().session_states(project), uow.clock(), policy)
