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
from functools import cached_property
from typing import Any, NamedTuple, Protocol
from uuid import UUID

from mnemolog.domain.item_kinds import GLOBAL_SCOPE
from mnemolog.domain.project_names import project_label

_TOKEN = re.compile(r"\w+", re.UNICODE)
_CHUNK = re.compile(r"\S+")
_LINE = re.compile(r".+")  # a line (without its newline)
FORGOTTEN_MARK = "[forgotten]"
# Unicode's default-ignorable code points (zero-width space and joiners, soft hyphen, word
# joiner, bidi controls, variation selectors, tags...): invisible, so never a word break.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
# A word broken across lines ("Ori-" / "on", or "Ori" / "on"): matched joined as well as apart.
_BROKEN_WORD = re.compile(r"(?<=\w)-?[ \t]*(?:\r\n|[\n\r\x0b\x0c\x85\u2028\u2029])[ \t]*(?=\w)")


class Token(NamedTuple):  # a tuple, not a dataclass: long texts make hundreds of thousands of them
    """A normalised token and where it sits in the original text."""

    text: str
    start: int
    end: int


def _continues_cluster(char: str) -> bool:
    # Marks and Hangul vowel/final jamo compose with what precedes them under NFKC.
    return unicodedata.category(char)[0] == "M" or "\u1160" <= char <= "\u11ff" or "\ud7b0" <= char <= "\ud7ff"


def _folded_words(chunk: str, offset: int) -> list[Token]:
    """Tokens of a chunk whose NFKC form differs from it, with spans in the original text.

    NFKC changes lengths (ligatures expand, combining marks compose), so each
    cluster is folded on its own and every folded character keeps the span of
    the cluster it came from.
    """
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(chunk) + 1):
        if end < len(chunk) and _continues_cluster(chunk[end]):
            continue
        piece = unicodedata.normalize("NFKC", chunk[start:end])
        parts.append(piece)
        spans.extend([(offset + start, offset + end)] * len(piece))
        start = end
    return [
        Token(m.group(0).casefold(), spans[m.start()][0], spans[m.end() - 1][1])
        for m in _TOKEN.finditer("".join(parts))
    ]


def _words(text: str, offset: int) -> list[Token]:
    return [Token(m.group(0).casefold(), offset + m.start(), offset + m.end()) for m in _TOKEN.finditer(text)]


def tokens(text: str, *, join_lines: bool = False, split_underscores: bool = False) -> list[Token]:
    """Words of ``text`` folded for matching (NFKC, case-folded), with their spans in ``text``.

    Invisible characters (zero-width, soft hyphen: see ``_INVISIBLE``) are
    ignored, so they never split a word. ``join_lines``: a word broken across
    a line break (with or without a hyphen) is read as one word.
    ``split_underscores``: ``orion_falcon`` (a branch, an identifier) is read
    as two words.
    """
    cut = _INVISIBLE.pattern if not join_lines else f"{_INVISIBLE.pattern}|{_BROKEN_WORD.pattern}"
    kept, where = _without(text, re.compile(cut))
    found = _visible_tokens(kept)
    if where is not None:
        found = [Token(t.text, where[t.start], where[t.end - 1] + 1) for t in found]
    return _split_at_underscores(found) if split_underscores else found


def _split_at_underscores(found: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in found:
        if "_" not in token.text:
            out.append(token)
            continue
        exact = token.end - token.start == len(token.text)  # not folded: each part has its own span
        at = 0
        for part in token.text.split("_"):
            if part:
                start = token.start + at if exact else token.start
                out.append(Token(part, start, start + len(part) if exact else token.end))
            at += len(part) + 1
    return out


def _without(text: str, pattern: re.Pattern[str]) -> tuple[str, list[int] | None]:
    """``text`` with ``pattern``'s matches removed, and each kept character's index in ``text`` (None: nothing removed)."""
    if not pattern.search(text):
        return text, None
    pieces: list[str] = []
    where: list[int] = []
    last = 0
    for match in pattern.finditer(text):
        pieces.append(text[last : match.start()])
        where.extend(range(last, match.start()))
        last = match.end()
    pieces.append(text[last:])
    where.extend(range(last, len(text)))
    return "".join(pieces), where


def _visible_tokens(text: str) -> list[Token]:
    if unicodedata.is_normalized("NFKC", text):
        return _words(text, 0)
    # Words never span whitespace, and NFKC keeps whitespace whitespace: fold line
    # by line, then chunk by chunk, only where the text is not already folded.
    found: list[Token] = []
    for line in _LINE.finditer(text):
        if unicodedata.is_normalized("NFKC", line.group(0)):
            found.extend(_words(line.group(0), line.start()))
            continue
        for chunk in _CHUNK.finditer(line.group(0)):
            at = line.start() + chunk.start()
            if unicodedata.is_normalized("NFKC", chunk.group(0)):
                found.extend(_words(chunk.group(0), at))
            else:
                found.extend(_folded_words(chunk.group(0), at))
    return found


def value_digest(key: bytes, words: Iterable[str]) -> str:
    """The keyed hash of a sequence of normalised words."""
    return hmac.digest(key, " ".join(words).encode(), hashlib.sha256).hex()


def fingerprint(key: bytes, value: str) -> tuple[str, int]:
    """(digest, width) for a value to forget; raises ValueError for a value with no words.

    Underscores separate words (``orion_falcon`` is two), so the value is found
    in identifiers and branch names too; text is also read with underscores
    kept, for tombstones placed before that rule.
    """
    words = [t.text for t in tokens(value, split_underscores=True)]
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


_BLOCK = 64  # SHA-256's block size, for HMAC's pads


class WindowHash:
    """HMAC-SHA256 (RFC 2104, the bytes ``hmac.digest`` gives) of texts fed word by word.

    Both keyed pads are hashed once per matcher; a window's hash starts from
    a copy of the inner one, and the hash of ``a b c`` continues that of
    ``a b`` (hashlib's own objects: half the cost of an ``hmac`` object each).
    """

    def __init__(self, key: bytes) -> None:
        padded = (hashlib.sha256(key).digest() if len(key) > _BLOCK else key).ljust(_BLOCK, b"\0")
        self.inner = hashlib.sha256(bytes(b ^ 0x36 for b in padded))
        self.outer = hashlib.sha256(bytes(b ^ 0x5C for b in padded))

    def start(self, first: bytes) -> Any:
        """A hash fed ``first``; feed it more with ``update``, read it with ``digest``."""
        state = self.inner.copy()
        state.update(first)
        return state

    def digest(self, state: Any) -> bytes:
        """The keyed hash of what ``state`` was fed."""
        outer = self.outer.copy()
        outer.update(state.digest())
        return outer.digest()


_DIGEST_CACHE = 50_000  # single words whose keyed hash a matcher remembers (a few MB at most)
_CLEAN_CACHE_CHARS = 32_000_000  # characters of clean text a matcher remembers (~64 MB at most)
_CLEAN_CACHE_LONGEST = 8_192  # longer texts (session transcripts) are matched afresh: they are read once

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


def _plain(text: str) -> bool:
    """True when ``text`` reads one way only: its words as they stand, folded by case alone.

    No invisible characters, nothing NFKC changes, no underscores, no word
    broken across lines, no mark a scrub left.
    """
    return (
        "_" not in text
        and FORGOTTEN_MARK not in text
        and _INVISIBLE.search(text) is None
        and _BROKEN_WORD.search(text) is None
        and unicodedata.is_normalized("NFKC", text)
    )


def _unmarked_runs(text: str, toks: list[Token]) -> list[list[Token]]:
    """The tokens ``toks`` of ``text`` in runs between the marks a scrub left.

    A mark is never part of a match: its word would otherwise match a value
    that holds it ("forgotten ...") or join its neighbours into the value
    again, and a scrubbed text would never be clean.
    """
    if FORGOTTEN_MARK not in text:
        return [toks]
    marks = [(m.start(), m.end()) for m in re.finditer(re.escape(FORGOTTEN_MARK), text)]
    runs: list[list[Token]] = [[]]
    j = 0
    for token in toks:  # tokens and marks both run left to right
        while j < len(marks) and marks[j][1] <= token.start:
            j += 1
        if j < len(marks) and marks[j][0] <= token.start and token.end <= marks[j][1]:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(token)
    return runs


@dataclass(frozen=True)
class Match:
    """Where a tombstoned value was found."""

    tombstone_id: UUID
    start: int
    end: int


class TombstoneMatcher:
    """Finds and cuts tombstoned values out of text.

    A matcher is fixed: its key and rules never change, so a text it found
    clean for a reader stays clean. It remembers the (short) clean texts it
    read, each with the reader's scope: reading the same item again costs a
    lookup, an edited item is a new text, and a tombstone placed or lifted
    makes a new matcher (``Store.matcher`` keeps one while the tombstones in
    force stay the same). A text that carries a value is never kept: it is
    matched again at each read, and no copy of it outlives the read.
    """

    def __init__(self, key: bytes, rules: Iterable[TombstoneRule]) -> None:
        self.key = key
        self.rules = tuple(rules)
        self._digests: dict[str, bytes] = {}  # word -> keyed hash: texts repeat their words, hashing is the cost
        self._reaching: dict[str | None, dict[int, dict[bytes, UUID]]] = {}  # reader scope -> width -> digest -> tombstone
        self._clean: set[tuple[str | None, str]] = set()  # (reader scope, text) found clean
        self._clean_chars = 0

    @cached_property
    def _hash(self) -> WindowHash:
        return WindowHash(self.key)

    def same_as(self, key: bytes, rules: Sequence[TombstoneRule]) -> bool:
        """True when this matcher has ``key`` and exactly ``rules`` (so it may stand for a new one over them)."""
        return hmac.compare_digest(self.key, key) and self.rules == tuple(rules)

    def _by_width(self, scope: str | None) -> dict[int, dict[bytes, UUID]]:
        """The tombstones reaching a reader in ``scope``: width -> digest -> tombstone id."""
        by_width = self._reaching.get(scope)
        if by_width is None:
            by_width = {}
            for rule in self.rules:
                if reaches(rule.scope, scope):
                    by_width.setdefault(rule.width, {})[bytes.fromhex(rule.digest)] = rule.tombstone_id
            self._reaching[scope] = by_width
        return by_width

    def find(self, text: str, scope: str | None) -> list[Match]:
        """Every match in ``text`` of a tombstone that reaches a reader in ``scope``."""
        if not self.rules or not text:
            return []
        if len(text) > _CLEAN_CACHE_LONGEST:
            return self._find(text, scope)
        if (scope, text) in self._clean:
            return []
        found = self._find(text, scope)
        if not found:
            if self._clean_chars + len(text) > _CLEAN_CACHE_CHARS:
                self._clean.clear()
                self._clean_chars = 0
            self._clean.add((scope, text))
            self._clean_chars += len(text)
        return found

    def _find(self, text: str, scope: str | None) -> list[Match]:
        by_width = self._by_width(scope)
        if not by_width:
            return []
        if _plain(text) and not self._windows_in([w.casefold() for w in _TOKEN.findall(text)], by_width):
            return []  # the words alone say it is clean: no spans to find
        found: list[Match] = []
        # Every reading of the text: words broken across lines joined; underscores splitting words
        # (and not, for tombstones placed before they did).
        joins = [False, True] if _BROKEN_WORD.search(text) else [False]
        splits = [True, False] if "_" in text else [True]
        for join_lines in joins:
            kept = tokens(text, join_lines=join_lines)  # tokenised once per reading of line breaks
            for toks in (run for split in splits for run in _unmarked_runs(text, _split_at_underscores(kept) if split else kept)):
                found.extend(
                    Match(tombstone_id, toks[first].start, toks[last].end)
                    for tombstone_id, first, last in self._windows_in([t.text for t in toks], by_width)
                )
        return sorted(set(found), key=lambda m: (m.start, m.end))

    def _windows_in(self, words: list[str], by_width: dict[int, dict[bytes, UUID]]) -> list[tuple[UUID, int, int]]:
        """(tombstone, first word, last word) of each window of ``words`` whose keyed hash is a tombstone's.

        The windows starting at one word share one keyed hash fed word by word
        (the hash of ``a b c`` continues that of ``a b``), so a word is fed
        once per start, not once per width. Single words repeat across texts:
        their hashes are remembered; longer windows seldom do.
        """
        spaced = [b" " + w.encode() for w in words] if max(by_width) > 1 else []  # a word as it continues a window
        singles = by_width.get(1)
        longer = sorted((w, d) for w, d in by_width.items() if w > 1)
        cache, inner, outer = self._digests, self._hash.inner, self._hash.outer
        found: list[tuple[UUID, int, int]] = []
        n = len(words)
        for i, word in enumerate(words):
            if singles is not None:
                digest = cache.get(word)
                if digest is None:
                    if len(cache) >= _DIGEST_CACHE:
                        cache.clear()
                    digest = cache[word] = self._hash.digest(self._hash.start(word.encode()))
                hit = singles.get(digest)
                if hit is not None:
                    found.append((hit, i, i))
            if not longer or longer[0][0] > n - i:
                continue
            state, fed = inner.copy(), 1  # inlined WindowHash.start and .digest: this loop is the cost of a read
            state.update(spaced[i][1:])
            for width, digests in longer:
                if width > n - i:
                    break
                while fed < width:
                    state.update(spaced[i + fed])
                    fed += 1
                keyed = outer.copy()
                keyed.update(state.digest())
                hit = digests.get(keyed.digest())
                if hit is not None:
                    found.append((hit, i, i + width - 1))
        return found

    def contains(self, text: str, scope: str | None) -> bool:
        """True when ``text`` carries a value withheld from a reader in ``scope``."""
        return bool(self.find(text, scope))

    def withholds(self, item: Matchable, scope: str | None) -> bool:
        """True when ``item`` carries a value withheld from a reader in ``scope`` (see ``reaches``).

        Readers pass their project (``EVERY_PROJECT`` for the shared folder);
        writers (plan checks, code retirements, forgetting) pass the item's own
        scope, since that is who will read it. A task group or keyword that is
        just that project's name (``project_label``) carries nothing: it says no
        more than the scope key, which forgetting never rewrites. A value that
        runs on past the name is carried.
        """
        if not self.rules:
            return False
        parts = [item.title, item.text, *item.keywords, item.task_group]
        skill = getattr(item, "skill", None)
        if skill is not None:  # its model loaded already: the read path never imports the skill models itself
            from mnemolog.domain.skill import skill_texts

            parts += skill_texts(skill)  # a skill's name, steps and what it relies on
        name = project_label(scope) if scope is not None and scope != GLOBAL_SCOPE else None
        if name is None or name not in parts:
            return self.contains(" ".join(parts), scope)
        text, named = "", []  # the parts joined by spaces; where the project's name stands alone
        for part in parts:
            if part == name:
                named.append((len(text), len(text) + len(part)))
            text += part + " "
        # A value that runs on past the name (a keyword "api" then "key", for "api key") is carried.
        return any(not any(a <= m.start and m.end <= b for a, b in named) for m in self.find(text, scope))

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

