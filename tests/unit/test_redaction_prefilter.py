"""The redaction prefilter skips only rules that could not match: redaction finds what it found without it."""

from __future__ import annotations

import re
import sys

import pytest
from mnemolog.adapters import redaction
from mnemolog.adapters.redaction import fold, redact
from mnemolog.adapters.session_files import read_session
from support.secrets_corpus import SECRETS, planted
from support.shared_fixtures import SHARED, shared_fixture


def test_fold_keeps_every_character_re_matches_to_an_ascii_letter_ignoring_case() -> None:
    letter = re.compile(r"[a-z]", re.IGNORECASE)
    for code in range(128, sys.maxunicode + 1):
        char = chr(code)
        if letter.fullmatch(char):
            assert re.fullmatch(r"[a-z]", fold(char)), hex(code)


def _texts() -> list[str]:
    shared_fixture("codex-rollouts")
    texts = [planted(kind, value) for kind, value in SECRETS]
    texts += [planted(kind, value).upper() for kind, value in SECRETS]
    texts += ["ſecret = 'Zx9qLm2Vb7Nc4Rt8Wy'", "AWS_SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYmnemoLOGKEY9'"]
    for path in sorted(SHARED.rglob("*.jsonl")):
        texts += [item.text for item in read_session(path).items]
    return texts


def test_redaction_with_the_prefilter_equals_redaction_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts()
    filtered = [redact(text) for text in texts]
    monkeypatch.setattr(redaction, "_needs", lambda pattern: None)  # every rule runs on every text
    assert [redact(text) for text in texts] == filtered
    assert sum(count for _, count in filtered) >= len(SECRETS)
