"""Codex's rollout summary stem rule and mnemolog's extension for non-UUIDv7 ids."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest
from mnemolog.projections.codex_layout import (
    rfc3339_utc,
    rollout_summary_stem,
    sanitize_slug,
    short_hash,
    uuid7_time,
)

V7 = "0194f5a6-89ab-7cde-8123-456789abcdef"
PREFIX = "2025-02-11T15-35-19-jqmb"


def test_codex_test_vector() -> None:
    assert rollout_summary_stem(V7, None) == PREFIX


def test_uuid7_timestamp_is_utc_and_truncated_to_seconds() -> None:
    assert uuid7_time(V7) == datetime(2025, 2, 11, 15, 35, 19, 723000, tzinfo=UTC)
    # the fallback time is ignored for a v7 id
    assert rollout_summary_stem(V7, None, datetime(2000, 1, 1, tzinfo=UTC)) == PREFIX


def test_slug_is_sanitised_and_truncated_like_codex() -> None:
    slug = "Unsafe Slug/With Spaces & Symbols + EXTRA_LONG_12345_67890_ABCDE_fghij_klmno"
    stem = rollout_summary_stem(V7, slug)
    assert stem == f"{PREFIX}-unsafe_slug_with_spaces___symbols___extra_long_12345_67890_a"
    assert len(stem.removeprefix(PREFIX + "-")) == 60


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Fix Bug", "fix_bug"),
        ("trailing!!!", "trailing"),
        ("___", ""),
        ("", ""),
        ("café-Ünïcode", "caf___n_code"),  # non-ASCII letters become '_', one per character
        ("a" * 59 + "!b", "a" * 59),  # cut at 60, then the trailing '_' goes
        ("ABC123", "abc123"),
    ],
)
def test_sanitize_slug(raw: str, clean: str) -> None:
    assert sanitize_slug(raw) == clean


def test_empty_slug_adds_nothing() -> None:
    assert rollout_summary_stem(V7, "") == PREFIX
    assert rollout_summary_stem(V7, "!!!") == PREFIX
    assert rollout_summary_stem(V7, "ok") == f"{PREFIX}-ok"


def test_short_hash_base62_most_significant_first() -> None:
    assert short_hash(0) == "0000"
    assert short_hash(61) == "000Z"
    assert short_hash(62) == "0010"
    assert short_hash(62**4) == "0000"  # modulo 62^4
    assert short_hash(0x89ABCDEF) == "jqmb"


def test_uuid4_uses_fallback_time_and_low_32_bits() -> None:
    v4 = "9b2f6c1e-4d3a-4e5f-8a7b-0c1d2e3f4a5b"
    start = datetime(2025, 3, 1, 8, 5, 9, 999999, tzinfo=timezone(timedelta(hours=2)))
    stem = rollout_summary_stem(v4, "My Slug", start)
    assert stem == f"2025-03-01T06-05-09-{short_hash(0x2E3F4A5B)}-my_slug"


def test_naive_fallback_time_is_taken_as_utc() -> None:
    v4 = "9b2f6c1e-4d3a-4e5f-8a7b-0c1d2e3f4a5b"
    assert rollout_summary_stem(v4, None, datetime(2025, 3, 1, 6, 5, 9)).startswith(
        "2025-03-01T06-05-09-"
    )


def test_non_uuid_id_hashes_with_sha256() -> None:
    seed = int.from_bytes(hashlib.sha256(b"infra-run-42").digest(), "big") & 0xFFFFFFFF
    stem = rollout_summary_stem("infra-run-42", None, datetime(2025, 2, 10, 8, tzinfo=UTC))
    assert stem == f"2025-02-10T08-00-00-{short_hash(seed)}"


def test_non_v7_without_fallback_time_is_an_error() -> None:
    with pytest.raises(ValueError, match="fallback_time"):
        rollout_summary_stem("not-a-uuid", None)


def test_rfc3339_matches_chrono_to_rfc3339() -> None:
    assert rfc3339_utc(datetime(2025, 2, 1, 10, 30, tzinfo=UTC)) == "2025-02-01T10:30:00+00:00"
    assert rfc3339_utc(datetime(2025, 2, 1, 10, 30, 0, 250000, tzinfo=UTC)).endswith(
        ":00.250+00:00"
    )
    assert rfc3339_utc(datetime(2025, 2, 1, 10, 30, 0, 250001, tzinfo=UTC)).endswith(
        ":00.250001+00:00"
    )
    plus_two = timezone(timedelta(hours=2))
    assert rfc3339_utc(datetime(2025, 2, 1, 12, 0, tzinfo=plus_two)) == "2025-02-01T10:00:00+00:00"
