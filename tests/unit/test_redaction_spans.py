"""Redaction finds exactly the spans it found before its rules were anchored on their literals.

The spans were recorded (``tests/unit/data/redaction_spans.json``) from the
implementation of 2026-12-01 that ran every rule's regex over the whole text,
on ``support.redaction_corpus``: ~15,000 synthetic texts (planted secrets of
every kind and their variants, session-shaped lines, random mixes). For the
real session files only a digest of the spans is recorded (what ingest
redacts, every line and string, each line with a secret planted in it).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from mnemolog.adapters.redaction import REDACTED, redact, secret_spans
from support.redaction_corpus import (
    RECORD,
    digest,
    fixture_digest,
    fixture_files,
    fixture_texts,
    texts,
)
from support.shared_fixtures import shared_fixture

RECORDED = json.loads(RECORD.read_text())


def test_the_corpus_is_the_one_the_spans_were_recorded_on() -> None:
    corpus = texts()
    assert len(corpus) == RECORDED["texts"] and digest(corpus) == RECORDED["digest"]
    assert len(RECORDED["spans"]) > 5_000 and len(corpus) - len(RECORDED["spans"]) > 3_000  # both kinds of text


def test_every_synthetic_text_has_exactly_the_recorded_spans() -> None:
    wrong = []
    for index, text in enumerate(texts()):
        want = [tuple(span) for span in RECORDED["spans"].get(str(index), [])]
        got = secret_spans(text)
        if got != want:
            wrong.append(f"text {index} {text[:120]!r}: recorded {want}, now {got}")
    assert not wrong, f"{len(wrong)} texts differ:\n" + "\n".join(wrong[:20])


def test_redact_replaces_exactly_the_spans() -> None:
    for text in texts()[:3_000]:
        spans = secret_spans(text)
        clean, count = redact(text)
        assert count == len(spans)
        pieces, cursor = [], 0
        for start, end in spans:
            pieces += [text[cursor:start], REDACTED]
            cursor = end
        assert clean == "".join(pieces) + text[cursor:]


@pytest.mark.parametrize("name", sorted(RECORDED["fixtures"]))
def test_real_session_files_have_exactly_the_recorded_spans(name: str) -> None:
    path = shared_fixture(name)
    recorded = RECORDED["fixtures"][name]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == recorded["bytes_sha256"], f"{name} changed since the record"
    found = [secret_spans(text) for text in fixture_texts(path)]
    assert (len(found), sum(map(len, found))) == (recorded["texts"], recorded["spans"])
    assert fixture_digest([list(spans) for spans in found]) == recorded["digest"]


def test_every_real_session_file_is_recorded() -> None:
    shared_fixture("codex-rollouts")
    assert {f"{p.parent.name}/{p.name}" for p in fixture_files()} == set(RECORDED["fixtures"])
