"""Tombstone matching: keyed hashes of normalised token windows.

A forgotten value is never stored. Its normalised tokens are hashed with a key
held outside the log; to find it inside longer text, every window of the same
number of tokens is hashed with the same key and compared.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from mnemolog.domain.plan import GLOBAL_SCOPE

_TOKEN = re.compile(r"\w+", re.UNICODE)
FORGOTTEN_MARK = "[forgotten]"


@dataclass(frozen=True)
class Token:
    """A normalised token and where it sits in the original text."""

    text: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """Words of ``text`` folded for matching (NFKC, case-folded), with their spans."""
    folded = unicodedata.normalize("NFKC", text)
    # NFKC can change lengths; match on the folded text only when lengths agree.
    source = folded if len(folded) == len(text) else text
    return [Token(m.group(0).casefold(), m.start(), m.end()) for m in _TOKEN.finditer(source)]


def value_digest(key: bytes, words: Iterable[str]) -> str:
    """The keyed hash of a sequence of normalised words."""
    return hmac.new(key, " ".join(words).encode(), hashlib.sha256).hexdigest()


def fingerprint(key: bytes, value: str) -> tuple[str, int]:
    """(digest, width) for a value to forget; raises ValueError for a value with no words."""
    words = [t.text for t in tokens(value)]
    if not words:
        raise ValueError("the value has no words to match")
    return value_digest(key, words), len(words)


def matchable_text(title: str, text: str, keywords: Iterable[str], task_group: str) -> str:
    """Everything of a memory item that a tombstone is matched against."""
    return " ".join([title, text, " ".join(keywords), task_group])


@dataclass(frozen=True)
class TombstoneRule:
    """An active tombstone as the matcher needs it."""

    tombstone_id: UUID
    digest: str
    width: int
    scope: str


def applies(rule_scope: str, subject_scope: str | None) -> bool:
    """A global tombstone applies everywhere; a project one to that project only."""
    return rule_scope in (GLOBAL_SCOPE, subject_scope)


@dataclass(frozen=True)
class Match:
    """Where a tombstoned value was found."""

    tombstone_id: UUID
    start: int
    end: int


class TombstoneMatcher:
    """Finds and cuts tombstoned values out of text."""

    def __init__(self, key: bytes, rules: Iterable[TombstoneRule]) -> None:
        self.key = key
        self.rules = tuple(rules)

    def find(self, text: str, scope: str | None) -> list[Match]:
        """Every match of an applicable tombstone in ``text``."""
        rules = [r for r in self.rules if applies(r.scope, scope)]
        if not rules or not text:
            return []
        toks = tokens(text)
        found: list[Match] = []
        by_width: dict[int, dict[str, UUID]] = {}
        for rule in rules:
            by_width.setdefault(rule.width, {})[rule.digest] = rule.tombstone_id
        for width, digests in by_width.items():
            for i in range(len(toks) - width + 1):
                window = toks[i : i + width]
                hit = digests.get(value_digest(self.key, (t.text for t in window)))
                if hit is not None:
                    found.append(Match(hit, window[0].start, window[-1].end))
        return sorted(found, key=lambda m: (m.start, m.end))

    def contains(self, text: str, scope: str | None) -> bool:
        """True when an applicable tombstoned value occurs in ``text``."""
        return bool(self.find(text, scope))

    def scrub(self, text: str, scope: str | None) -> tuple[str, tuple[UUID, ...]]:
        """``text`` with every match replaced by a mark, and the tombstones that matched."""
        matches = self.find(text, scope)
        if not matches:
            return text, ()
        out, last = [], 0
        for m in matches:
            if m.start < last:  # overlapping windows: extend the cut already made
                last = max(last, m.end)
                continue
            out.append(text[last : m.start])
            out.append(FORGOTTEN_MARK)
            last = m.end
        out.append(text[last:])
        ids = tuple(sorted({m.tombstone_id for m in matches}, key=str))
        return "".join(out), ids

    def scrub_everywhere(self, text: str) -> tuple[str, tuple[UUID, ...]]:
        """``text`` with the values of every rule cut out, whatever its scope (for text read in any project)."""
        hits: set[UUID] = set()
        for scope in sorted({rule.scope for rule in self.rules}):
            text, ids = self.scrub(text, scope)
            hits.update(ids)
        return text, tuple(sorted(hits, key=str))
