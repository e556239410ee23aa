"""The redaction prefilter skips only rules that could not match: redaction finds what it found without it."""

from __future__ import annotations

import re
import sys

import pytest
import re2
from mnemolog.adapters import redaction
from mnemolog.adapters.redaction import redact
from mnemolog.adapters.redaction_prefilter import (
    FOLDED_ONTO,
    UNICODE_SPACE,
    Prefilter,
    case_variants,
    to_re2,
)
from mnemolog.adapters.session_files import read_session
from support.secrets_corpus import SECRETS, planted
from support.shared_fixtures import SHARED, shared_fixture

EVERY_CHARACTER = "".join(chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF)


def _rule_patterns() -> list[re.Pattern[str]]:
    return list(redaction._rules().patterns)


def test_every_character_re_matches_to_an_ascii_letter_ignoring_case_is_a_case_variant() -> None:
    for letter in "abcdefghijklmnopqrstuvwxyz":
        taken = set(re.findall(letter, EVERY_CHARACTER, re.IGNORECASE))
        assert taken <= case_variants(letter), (letter, taken - case_variants(letter))
    assert set(FOLDED_ONTO) == {"i", "k", "s"}


def test_the_translated_classes_take_every_character_python_takes() -> None:
    assert "".join(re.findall(r"\s", EVERY_CHARACTER)) == UNICODE_SPACE
    for python in (r"\d", r"\w", r"\s", r"[^\s'\"]", r"[a-z0-9]", r"[^,;]"):
        for flags in (0, re.IGNORECASE):
            pattern = re.compile(python, flags)
            translated = to_re2(pattern)
            assert translated is not None and translated.startswith("[") and translated.endswith("]")
            # A character Python takes that the translation does not: one its complement takes.
            complement = "[" + translated[2:] if translated.startswith("[^") else "[^" + translated[1:]
            taken = "".join(re.findall(python, EVERY_CHARACTER, flags))
            missed = re2.search(complement, taken)
            assert missed is None, (python, flags, missed and missed.group(0))


def test_every_literal_of_every_ignorecase_rule_is_translated_with_all_its_variants() -> None:
    letters = {c for pattern in _rule_patterns() if pattern.flags & re.IGNORECASE for c in pattern.pattern if c.isalpha()}
    assert "ñ" in letters  # detect-secrets' "contraseña"
    for char in letters:
        taken = set(re.findall(re.escape(char), EVERY_CHARACTER, re.IGNORECASE))
        assert taken <= case_variants(char), (char, taken - case_variants(char))


def test_a_text_re2_cannot_take_runs_every_rule() -> None:
    prefilter = Prefilter([re.compile("abc")])
    assert prefilter.candidates("xxabcxx") == frozenset({0})
    assert prefilter.candidates("nothing here") == frozenset()
    assert prefilter.candidates("abc \ud800") is None  # a lone surrogate: no UTF-8, every rule runs
    clean, count = redact("password=hunter2-Corr3ct-Horse \ud800")
    assert count == 1 and "hunter2" not in clean


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
    prefilter = redaction._rules().prefilter
    monkeypatch.setattr(prefilter, "candidates", lambda text: None)  # every rule runs on every text
    assert [redact(text) for text in texts] == filtered
    assert sum(count for _, count in filtered) >= len(SECRETS)
