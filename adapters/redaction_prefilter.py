"""Which redaction rules can match a text, all told in one linear-time pass (RE2).

Each rule's Python regex is translated into an RE2 pattern that matches
wherever the Python one does, and possibly more (a superset): look-arounds,
anchors and word boundaries are left out, a back-reference becomes its group's
pattern, ``\\d``, ``\\w`` and ``\\s`` take every character Python's Unicode
classes take, and ``IGNORECASE`` letters every character Python folds onto
them (``İ``, ``ı``, ``ſ``, the Kelvin sign). Inside a negated class the
translation takes a subset instead, so that the complement is again a
superset. One ``RE2::Set`` holds them all; a text is scanned once and only the
rules it names run (with Python's ``re``, exactly as before). A text RE2
cannot take (lone surrogates) or a scan RE2 gives up on (its DFA out of
memory, told by an always-matching canary pattern) runs every rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

import re2

# Every character Python's ``\s`` takes in a str pattern (tests/unit/test_redaction_prefilter.py checks it).
UNICODE_SPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
ASCII_SPACE = " \t\n\r\x0b\x0c"
# Characters other than X and x that ``re`` matches to the ASCII letter x ignoring case (checked by the tests).
FOLDED_ONTO = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
_ANY = r"[\x{0}-\x{10ffff}]"
COUNT_LIMIT = 24  # repetitions counted up to this; above it, a loop or a cut
_MAX_MEM = 64 << 20


def _char(code: int) -> str:
    char = chr(code)
    return char if char.isascii() and char.isalnum() else f"\\x{{{code:x}}}"


def case_variants(char: str) -> set[str]:
    """``char`` and every character ``re`` may match to it ignoring case (a superset)."""
    out = {variant for variant in (char, char.lower(), char.upper(), char.swapcase(), char.casefold()) if len(variant) == 1}
    for variant in list(out):
        out.update(FOLDED_ONTO.get(variant.lower(), ""))
    return out


class _Untranslatable(Exception):
    """A construct with no translation: the rule always runs."""


class _Cut(Exception):
    """The translation ends here; ``head`` is what it holds so far."""

    def __init__(self, head: str) -> None:
        super().__init__(head)
        self.head = head


_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


def _score(op: Any, arg: Any) -> float:
    """How much an element narrows where a pattern can match: literal characters most."""
    if op is sre.LITERAL:
        return 4.0
    if op in (sre.IN, sre.ANY, sre.NOT_LITERAL):
        return 0.25
    if op is sre.BRANCH:
        return min(sum(_score(o, a) for o, a in branch) for branch in arg[1])
    if op is sre.SUBPATTERN:
        return sum(_score(o, a) for o, a in arg[3])
    if op in _REPEATS:
        return float(min(arg[0], COUNT_LIMIT)) * sum(_score(o, a) for o, a in arg[2])
    return 0.0


def _narrow(parsed: Any) -> bool:
    """A single character of a few (a literal, a small class of literals, whitespace): loops over it stay.

    Loops over broad classes (``\\w``, ``.``, ``[^'"]``), many of them active at once, make
    RE2's DFA grow without bound: those are cut.
    """
    if len(parsed) != 1:
        return False
    op, arg = parsed[0]
    if op is sre.LITERAL:
        return True
    if op is sre.IN and not (arg and arg[0][0] is sre.NEGATE):
        return (all(o is sre.LITERAL for o, _ in arg) and len(arg) <= 8) or arg == [(sre.CATEGORY, sre.CATEGORY_SPACE)]
    return False


class _Translator:
    def __init__(self, flags: int, word_loops: bool = False) -> None:
        self.ascii = bool(flags & re.ASCII)
        self.word_loops = word_loops
        self.groups: dict[int, str] = {}

    def best_piece(self, parsed: Any, icase: bool, dotall: bool) -> str:
        """The most telling run of consecutive top-level elements (each cut ends one).

        Every match of a sequence holds a match of any run of its consecutive elements (the
        last of them possibly cut short), so each run alone is a superset; the one with the
        most literal characters filters best.
        """
        pieces: list[tuple[float, str]] = []
        parts: list[str] = []
        score = 0.0
        for op, arg in parsed:
            try:
                parts.append(self.node(op, arg, icase, dotall))
                score += _score(op, arg)
            except _Cut as cut:
                parts.append(cut.head)
                score += _score(op, arg) if op in _REPEATS else 0.0
                pieces.append((score, "".join(parts)))
                parts, score = [], 0.0
        if parts:
            pieces.append((score, "".join(parts)))
        return max(pieces, key=lambda piece: piece[0])[1] if pieces else ""

    def sequence(self, parsed: Any, icase: bool, dotall: bool) -> str:
        """The translation of a sequence, cut after its first unbounded loop over a broad class.

        A match of ``A X{m,} B`` begins with a match of ``A X{m}``: the cut form matches wherever
        the whole does (see :func:`_narrow` for which loops stay).
        """
        parts: list[str] = []
        for op, arg in parsed:
            try:
                parts.append(self.node(op, arg, icase, dotall))
            except _Cut as cut:
                parts.append(cut.head)
                raise _Cut("".join(parts)) from None
        return "".join(parts)

    def node(self, op: Any, arg: Any, icase: bool, dotall: bool) -> str:
        if op is sre.LITERAL:
            if icase and chr(arg).lower() != chr(arg).upper():
                return "[" + "".join(_char(ord(v)) for v in sorted(case_variants(chr(arg)))) + "]"
            return _char(arg)
        if op is sre.NOT_LITERAL:
            return _ANY if icase else f"[^{_char(arg)}]"
        if op is sre.ANY:
            return _ANY if dotall else r"[^\n]"
        if op is sre.IN:
            negate = bool(arg) and arg[0][0] is sre.NEGATE
            inner = self.members(arg[1:] if negate else arg, icase, superset=not negate)
            if inner is None:
                return _ANY
            return f"[^{inner}]" if negate else f"[{inner}]"
        if op is sre.BRANCH:
            branches, cut = [], False
            for branch in arg[1]:
                try:
                    branches.append(self.sequence(branch, icase, dotall))
                except _Cut as cutting:
                    branches.append(cutting.head)
                    cut = True
            text = "(?:" + "|".join(branches) + ")"
            if cut:
                raise _Cut(text)
            return text
        if op is sre.SUBPATTERN:
            group, add, drop, sub = arg
            inner_icase = (icase or bool(add & sre.SRE_FLAG_IGNORECASE)) and not drop & sre.SRE_FLAG_IGNORECASE
            inner_dotall = (dotall or bool(add & sre.SRE_FLAG_DOTALL)) and not drop & sre.SRE_FLAG_DOTALL
            try:
                text = self.sequence(sub, inner_icase, inner_dotall)
            except _Cut as cut:
                raise _Cut(f"(?:{cut.head})") from None
            if group:
                self.groups[group] = text
            return f"(?:{text})"
        if op in _REPEATS:
            low, high, sub = arg
            try:
                body = self.sequence(sub, icase, dotall)
            except _Cut as cut:  # the body was cut: what is left is needed once, if at all
                raise _Cut(f"(?:{cut.head})" if low else "") from None
            if high is sre.MAXREPEAT or high > COUNT_LIMIT:
                if _narrow(sub) or (self.word_loops and _spaceless(sub)):
                    return f"(?:{body}){{{min(low, COUNT_LIMIT)},}}"
                raise _Cut(f"(?:{body}){{{min(low, COUNT_LIMIT)}}}")
            return f"(?:{body}){{{low}}}" if high == low else f"(?:{body}){{{low},{high}}}"
        if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
            return ""  # a zero-width condition left out: matches only widen
        if op is sre.GROUPREF:
            if arg not in self.groups:  # a group that was cut (or is still open): the text it took is unknown
                raise _Cut("")
            return f"(?:{self.groups[arg]})"
        if op is sre.ATOMIC_GROUP:
            return f"(?:{self.sequence(arg, icase, dotall)})"
        if op is sre.GROUPREF_EXISTS:
            raise _Cut("")
        raise _Untranslatable(str(op))

    def members(self, items: Sequence[tuple[Any, Any]], icase: bool, superset: bool) -> str | None:
        """A class's members: a superset of them, or (``superset`` False) a subset; None: no such translation."""
        parts: list[str] = []
        for op, arg in items:
            if op is sre.LITERAL:
                if icase and not superset:
                    return None
                chars = case_variants(chr(arg)) if icase else {chr(arg)}
                parts += [_char(ord(c)) for c in sorted(chars)]
            elif op is sre.RANGE:
                low, high = arg
                parts.append(f"{_char(low)}-{_char(high)}")
                if icase:
                    if not superset or high > 0x24F:
                        return None
                    extra: set[str] = set()
                    for code in range(low, high + 1):
                        extra |= case_variants(chr(code))
                    parts += [_char(ord(c)) for c in sorted(extra)]
            elif op is sre.CATEGORY:
                part = self.category(arg, superset)
                if part is None:
                    return None
                parts.append(part)
            else:
                return None
        return "".join(parts)

    def category(self, category: Any, superset: bool) -> str | None:
        if category is sre.CATEGORY_DIGIT:
            return r"0-9\p{N}" if superset and not self.ascii else "0-9"
        if category is sre.CATEGORY_WORD:
            return r"0-9A-Za-z_\p{L}\p{N}\p{M}" if superset and not self.ascii else "0-9A-Za-z_"
        if category is sre.CATEGORY_SPACE:
            spaces = ASCII_SPACE if self.ascii and not superset else UNICODE_SPACE
            return "".join(_char(ord(c)) for c in spaces) + (r"\p{Z}" if superset else "")
        return None  # \D, \W, \S: left to the caller (any character, or no subset)


def _spaceless(parsed: Any) -> bool:
    """A single character of a class without space: a loop over it ends where a word ends."""
    if len(parsed) != 1 or parsed[0][0] is not sre.IN:
        return False
    items = parsed[0][1]
    if items and items[0][0] is sre.NEGATE:
        return any((o is sre.LITERAL and a == 32) or (o is sre.CATEGORY and a is sre.CATEGORY_SPACE) for o, a in items[1:])
    return not any(
        (o is sre.LITERAL and a == 32) or (o is sre.RANGE and a[0] <= 32 <= a[1]) or (o is not sre.LITERAL and o is not sre.RANGE
        and not (o is sre.CATEGORY and a in (sre.CATEGORY_WORD, sre.CATEGORY_DIGIT)))
        for o, a in items
    )


def to_re2(pattern: re.Pattern[str], word_loops: bool = False) -> str | None:
    """An RE2 pattern matching wherever ``pattern`` matches (and maybe elsewhere); None if there is none."""
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags & ~re.UNICODE)
        body = _Translator(pattern.flags, word_loops).best_piece(
            parsed, bool(pattern.flags & re.IGNORECASE), bool(pattern.flags & re.DOTALL)
        )
    except (_Untranslatable, re.error, RecursionError):
        return None
    return body or None  # nothing left to look for: the rule always runs


class Prefilter:
    """One RE2 pass over a text telling which of ``patterns`` may match in it."""

    def __init__(self, patterns: Sequence[re.Pattern[str]], word_loops: bool = False) -> None:
        """``word_loops``: keep loops over classes without spaces (a closer filter, a larger DFA:
        for a few patterns on few texts)."""
        options = re2.Options()
        options.max_mem = _MAX_MEM
        self._set = re2.Set.SearchSet(options)
        self._set.Add("")  # the canary: matches every text, so a result without it is a scan RE2 gave up on
        self._index: list[int] = [-1]
        self.always: frozenset[int] = frozenset()
        always = set()
        for number, pattern in enumerate(patterns):
            translated = to_re2(pattern, word_loops)
            if translated is None:
                always.add(number)
                continue
            try:
                self._set.Add(translated)
            except re2.error:
                always.add(number)
                continue
            self._index.append(number)
        self._set.Compile()
        self.always = frozenset(always)
        self.count = len(patterns)

    def candidates(self, text: str) -> frozenset[int] | None:
        """The numbers of the patterns that may match in ``text``; None: any may (run them all)."""
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        found = self._set.Match(encoded) or ()
        if 0 not in found:
            return None
        if len(found) == 1:
            return self.always
        index = self._index
        return self.always.union(index[n] for n in found if n)
