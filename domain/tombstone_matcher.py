"""Tombstone matching: keyed hashes of normalised token windows, and the one scope rule.

A forgotten value is never stored. Its normalised tokens are hashed with a key
held outside the log; to find it inside longer text, every window of the same
number of tokens is hashed with the same key and compared.

Which tombstones count is decided in one place, ``reaches``: every enforcement
point (plan checks, code retirements, forgetting, rendering, every read and
MCP answer) asks the matcher with the scope of whoever will read the text.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol
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


class Matchable(Protocol):
    """Everything of a memory item (or a proposed edit of one) that a tombstone is matched against."""

    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def keywords(self) -> Sequence[str]: ...
    @property
    def task_group(self) -> str: ...


@dataclass(frozen=True)
class TombstoneRule:
    """An active tombstone as the matcher needs it."""

    tombstone_id: UUID
    digest: str
    width: int
    scope: str


EVERY_PROJECT = None  # the reader of text that every project reads (the shared folder, a user profile)


def reaches(rule_scope: str, reader_scope: str | None) -> bool:
    """Whether a tombstone placed in ``rule_scope`` withholds text from a reader in ``reader_scope``.

    The one tombstone rule. A global tombstone reaches every reader. A project
    tombstone reaches readers in that project, whatever the scope of the text
    they read (their own items and the user's global ones), and the reader of
    every project (``EVERY_PROJECT``: the shared folder, which that project
    reads too). To judge what may be *stored*, pass the text's own scope: a
    global item is read in every project, so only global tombstones keep it
    out of the store, and each project's tombstone withholds it from that
    project's reads.
    """
    return reader_scope is EVERY_PROJECT or rule_scope in (GLOBAL_SCOPE, reader_scope)


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
        """Every match in ``text`` of a tombstone that reaches a reader in ``scope``."""
        rules = [r for r in self.rules if reaches(r.scope, scope)]
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
        """True when ``text`` carries a value withheld from a reader in ``scope``."""
        return bool(self.find(text, scope))

    def withholds(self, item: Matchable, scope: str | None) -> bool:
        """True when ``item`` carries a value withheld from a reader in ``scope`` (see ``reaches``).

        Readers pass their project (``EVERY_PROJECT`` for the shared folder);
        writers (plan checks, code retirements, forgetting) pass the item's own
        scope, since that is who will read it.
        """
        if not self.rules:
            return False
        return self.contains(" ".join([item.title, item.text, " ".join(item.keywords), item.task_group]), scope)

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

