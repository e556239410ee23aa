"""Benchmark: redaction of a real 750 KB rollout against one plain regex pass over the same text."""

from __future__ import annotations

import re
import time

import pytest
from mnemolog.adapters.redaction import redact_transcript
from mnemolog.adapters.session_files import read_session
from support.shared_fixtures import shared_fixture

pytestmark = pytest.mark.benchmark


def test_redaction_against_a_single_regex_pass() -> None:
    transcript = read_session(shared_fixture("codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"))
    texts = [item.text for item in transcript.items]
    codex_floor = re.compile(r"sk-[A-Za-z0-9]{20,}")  # the simplest of Codex's patterns
    redact_transcript(transcript)  # warm the compiled rules

    start = time.perf_counter()
    redact_transcript(transcript)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        codex_floor.sub("[REDACTED_SECRET]", text)
    baseline = time.perf_counter() - start
    size = sum(len(t) for t in texts)
    print(f"\nredaction of {size:,} chars: mnemolog {ours * 1000:.0f} ms, one regex {baseline * 1000:.1f} ms, time ratio {ours / baseline:.0f}")
