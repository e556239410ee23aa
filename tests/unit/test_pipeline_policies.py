"""The ingest and extract policies the settings give (and --since / --all override)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemolog.adapters.settings import Settings, claim_policy, eligibility_policy
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.extract import ClaimPolicy


def test_eligibility_from_settings_since_and_all(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, idle_hours=2, max_age_days=5)
    since = datetime(2026, 1, 1, tzinfo=UTC)
    assert eligibility_policy(settings) == EligibilityPolicy(idle=timedelta(hours=2), max_age=timedelta(days=5))
    assert eligibility_policy(settings, since) == EligibilityPolicy(idle=timedelta(hours=2), max_age=None, since=since)
    assert eligibility_policy(settings, since, all_sessions=True) == EligibilityPolicy(idle=timedelta(hours=2), max_age=None)


def test_claims_from_settings(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, claim_lease_seconds=60, max_attempts=5)
    assert claim_policy(settings) == ClaimPolicy(lease=timedelta(minutes=1), max_attempts=5)
