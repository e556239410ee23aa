"""Secret redaction for session text, before anything is stored or sent to a model.

Rules, all replacing only the secret value with ``[REDACTED_SECRET]``:

- Codex's own patterns (the floor): ``sk-…`` keys, ``AKIA…`` AWS key ids,
  ``Bearer <token>``, and ``api_key|apikey|token|secret|password`` followed by
  ``:`` or ``=`` and a value.
- Every regex-based detector shipped with the ``detect-secrets`` library (AWS,
  GitHub, GitLab, Slack tokens and webhooks, Stripe, JWT, basic-auth passwords
  in URLs, npm, Azure storage keys, SendGrid, Twilio, Discord, Telegram, PyPI,
  Mailchimp, Square, Artifactory, IBM, SoftLayer, Cloudant, OpenAI), read from
  the installed plugins so new releases add rules, plus its keyword detector's
  assignment patterns. The public-IP detector is left out: an address is not a
  secret.
- Extra rules: whole private-key blocks (``BEGIN … PRIVATE KEY`` to ``END``),
  fine-grained GitHub tokens, npm tokens, Google API keys and OAuth tokens,
  passwords in connection strings (``postgres://user:pass@host`` keeps user and
  host), and high-entropy values assigned to any name (``KEY=<long random>``),
  using detect-secrets' Shannon-entropy measure.
"""

from __future__ import annotations

import hashlib
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from mnemolog.adapters.redaction_prefilter import Prefilter
from mnemolog.domain.transcript import Transcript

REDACTED = "[REDACTED_SECRET]"

Span = tuple[int, int]
Finder = Callable[[str], Iterator[Span]]

_SECRET_WORDS = (
    r"api[_-]?key|apikey|access[_-]?key|secret|token|passwd|password|passphrase|pwd"
    r"|credentials?|auth[_-]?key|private[_-]?key|client[_-]?secret|session[_-]?key"
)
_SECRET_NAME = re.compile(rf"(?:{_SECRET_WORDS})", re.IGNORECASE)
# Lower-case keyword scan that finds where keyword rules can match (fast, case-sensitive).
_KEYWORD_HINT = re.compile(
    r"api[_-]?key|apikey|auth[_-]?key|service[_-]?key|account[_-]?key|db[_-]?key"
    r"|database[_-]?key|priv[_-]?key|private[_-]?key|client[_-]?key|db[_-]?pass"
    r"|database[_-]?pass|key[_-]?pass|passw|pwd|secret|token|credential|contrase"
    r"|access[_-]?key|session[_-]?key"
)
_HAS_SPACE = re.compile(r"\s")
_WINDOW_BEFORE = 120
_WINDOW_AFTER = 600

# Rules that need a secret-sounding name next to the value: run only near a keyword.
# (pattern, group holding the secret)
_KEYWORD_RULES: tuple[tuple[re.Pattern[str], int], ...] = (
    # Codex's floor: api_key|apikey|token|secret|password, then : or =, then 8+ characters.
    (
        re.compile(
            r"\b(?:api_key|apikey|token|secret|password)\b[\"']?\s*[:=]\s*[\"']?([^\s\"'`,;]{8,})",
            re.IGNORECASE,
        ),
        1,
    ),
)
# Names that contain a secret word (DB_PASSWORD=…, "client_secret": "…"); values filtered.
_NAMED_VALUE = re.compile(
    rf"(?:{_SECRET_WORDS})[A-Za-z0-9_.-]*[\"']?\s*(?::|=|:=|=>)\s*[\"']?"
    r"([^\s\"'`,;{}\[\]()<>]{8,})",
    re.IGNORECASE,
)
_CODE_REFERENCE = re.compile(
    r"^(?:\$\{?[A-Za-z_][\w]*\}?|[A-Z][A-Z0-9_]*|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|"
    r"[\^~<>=]*\d+(?:\.\d+)*(?:[-+][\w.]+)?)$"
)

# Token formats, matched anywhere. (pattern, group holding the secret; 0 = whole match)
_EXTRA_RULES: tuple[tuple[re.Pattern[str], int], ...] = (
    # Codex's floor.
    (re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9][A-Za-z0-9_-]{19,}"), 0),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), 0),
    (re.compile(r"\b[Bb]earer\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    (re.compile(r"\bBEARER\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    # Token formats detect-secrets does not cover (or, for JWTs, cuts short of the signature).
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), 0),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"), 0),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), 0),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), 0),
    (re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), 0),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    (re.compile(r"\b[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}"), 0),
    (re.compile(r"\b(?:ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), 0),
    # user:password@ in any URL (postgres://, mysql://, mongodb+srv://, https://, ...).
    # The look-behind starts a scheme only where a run of letters starts: linear on a long word.
    (re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s/@]+)@[^\s/@]"), 1),
)

_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
    r".*?(?:-----END \1PRIVATE KEY\2-----|\Z)",
    re.DOTALL,
)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC: \S+|\Z)", re.DOTALL)

# KEY=value where value looks random (checked with entropy below).
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_.-]{0,63})[\"']?[ \t]*(?::|=|:=)[ \t]*[\"']?"
    r"([A-Za-z0-9+/_.-]{20,}={0,2})(?![A-Za-z0-9+/_=.-])"
)
# Names under which even a hex value is a secret (hex alone is usually a hash or an id).
_HEX_SECRET_NAME = re.compile(
    r"key|secret|token|passw|pwd|salt|signing|hmac|auth|credential", re.IGNORECASE
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_SKIPPED_DETECTORS = frozenset({"Public IP (ipv4)", "Private Key", "Secret Keyword"})
_ID_NAME = re.compile(
    r"(?:^|[_.-])(?:id|ids|uuid|hash|sha\d*|digest|checksum|etag|commit|integrity|nonce)$"
    r"|[a-z]Id$|[a-z]Ids$",
)


def shannon_entropy(value: str) -> float:
    """Bits of Shannon entropy per character, as detect-secrets computes it."""
    if not value:
        return 0.0
    counts = Counter(value)
    size = len(value)
    return -sum(count / size * math.log2(count / size) for count in counts.values())


_ASCII_LOWER = re.compile("[a-z]")
_ASCII_UPPER = re.compile("[A-Z]")
_ASCII_DIGIT = re.compile("[0-9]")


def _looks_random(name: str, value: str) -> bool:
    """Whether an assigned value is a likely secret rather than a path, hash or id."""
    if _UUID.match(value) or value.startswith(("/", "./", "../", "~")) or "//" in value:
        return False
    if value.count(".") >= 2 and not _SECRET_NAME.search(name):
        return False  # dotted names, versions, hosts
    if _HEX.match(value):
        # Commit hashes and digests are hex too: only a secret-sounding name makes them secret.
        return bool(_HEX_SECRET_NAME.search(name)) and shannon_entropy(value) > 3.0
    if value.isascii():  # every value the assignment rule takes: the same answer, by three scans in C
        classes = (_ASCII_LOWER.search(value) is not None) + (_ASCII_UPPER.search(value) is not None) + (
            _ASCII_DIGIT.search(value) is not None
        )
    else:
        classes = sum(
            (
                any(c.islower() for c in value),
                any(c.isupper() for c in value),
                any(c.isdigit() for c in value),
            )
        )
    if classes < 3:
        return False
    threshold = min(4.5, math.log2(len(value)) - 0.6)
    return shannon_entropy(value) >= threshold


_ASSIGNMENT_PREFIX = r"(?:(?<=\W)|(?<=^))"
_ASSIGNMENT_HINT = re.compile(r"key|pwd|pass|token")


def _library_rules() -> tuple[tuple[re.Pattern[str], int | None], ...]:
    """detect-secrets' token detectors matched anywhere: (pattern, secret group or None)."""
    return _split_library_rules()[0]


def _library_assignment_rules() -> tuple[tuple[re.Pattern[str], int | None], ...]:
    """detect-secrets' ``name = value`` detectors (IBM, SoftLayer, Cloudant...): run near names."""
    return _split_library_rules()[1]


@lru_cache(maxsize=1)
def _split_library_rules() -> tuple[
    tuple[tuple[re.Pattern[str], int | None], ...], tuple[tuple[re.Pattern[str], int | None], ...]
]:
    """The regexes of detect-secrets' regex-based detectors, split by where they can match."""
    rules: list[tuple[re.Pattern[str], int | None]] = []
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - the dependency is declared
        return (), ()
    plugins: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin in sorted(plugins.items()):
        if secret_type in _SKIPPED_DETECTORS or not issubclass(plugin, RegexBasedDetector):
            continue
        denylist = getattr(plugin, "denylist", ())
        for pattern in denylist if isinstance(denylist, list | tuple) else ():
            if isinstance(pattern, re.Pattern):
                rules.append((pattern, None))
    anywhere = tuple(rule for rule in rules if not rule[0].pattern.startswith(_ASSIGNMENT_PREFIX))
    near_names = tuple(rule for rule in rules if rule[0].pattern.startswith(_ASSIGNMENT_PREFIX))
    return anywhere, near_names


@lru_cache(maxsize=1)
def _library_keyword_rules() -> tuple[tuple[re.Pattern[str], int], ...]:
    """detect-secrets' keyword detector: secret-sounding names with a quoted value."""
    try:
        from detect_secrets.plugins import keyword
    except ImportError:  # pragma: no cover - the dependency is declared
        return ()
    return tuple(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items())


def _secret_span(match: re.Match[str], group: int | None) -> Span | None:
    if group is not None:
        start, end = match.span(group)
        return (start, end) if start >= 0 and end > start else None
    if match.re.groups:
        for index in range(1, match.re.groups + 1):
            start, end = match.span(index)
            if start >= 0 and end > start:
                return start, end
        return None
    # Whole-match rules may include a delimiter (``\s``, ``"``, ``=``): trim it.
    start, end = match.span()
    text = match.string
    while start < end and text[start] in " \t\r\n\"'=:":
        start += 1
    while end > start and text[end - 1] in " \t\r\n\"'":
        end -= 1
    return (start, end) if end > start else None


def _keyword_windows(text: str, hint: re.Pattern[str] = _KEYWORD_HINT, lowered: str | None = None) -> list[Span]:
    """Stretches of ``text`` around secret-sounding words, clipped to their lines (``lowered``: ``text.lower()``)."""
    windows: list[Span] = []
    for hit in hint.finditer(text.lower() if lowered is None else lowered):
        line_start = text.rfind("\n", 0, hit.start()) + 1
        line_end = text.find("\n", hit.end())
        line_end = len(text) if line_end < 0 else line_end
        start = max(line_start, hit.start() - _WINDOW_BEFORE)
        end = min(line_end, hit.end() + _WINDOW_AFTER)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _plausible_value(value: str) -> bool:
    """A named value that is not a code reference, env-var name or version number."""
    return not _CODE_REFERENCE.match(value) and value.upper() != REDACTED.strip("[]")


def _refined(text: str, may: frozenset[int]) -> frozenset[int]:
    """``may`` without the keyword rules whose closer RE2 forms (the second pass) do not match in ``text``."""
    rules = _rules()
    narrowed = set(may - rules.keywords)
    for numbers, refine in rules.keyword_refine:
        if may.isdisjoint(numbers):
            continue
        found = refine.candidates(text)
        narrowed.update(numbers if found is None else (numbers[n] for n in found))
    return frozenset(narrowed) & may


def _keyword_spans(text: str, lowered: Callable[[], str], may: frozenset[int]) -> Iterator[Span]:
    """Secrets under secret-sounding names, looked for only around those names (``may``: rules that may match).

    Each window is a text of its own for the rules (``finditer`` over it): a rule whose RE2 form does not
    match in a window cannot match there either, so with several windows each is narrowed again.
    """
    rules = _rules()
    if rules.keyword_hint not in may:
        return
    may = _refined(text, may)
    if may.isdisjoint(rules.keywords):
        return
    windows = _keyword_windows(text, _KEYWORD_HINT, lowered())
    for start, end in windows:
        window = text[start:end]
        here = may if len(windows) == 1 else _refined(window, may)
        for number, (pattern, group) in zip(rules.codex_keywords, _KEYWORD_RULES, strict=True):
            if number in here:
                for match in pattern.finditer(window):
                    a, b = match.span(group)
                    yield start + a, start + b
        if rules.named_value in here:
            for match in _NAMED_VALUE.finditer(window):
                if _plausible_value(match.group(1)):
                    a, b = match.span(1)
                    yield start + a, start + b
        for number, (pattern, lib_group) in zip(rules.library_keywords, _library_keyword_rules(), strict=True):
            if number in here:
                for match in pattern.finditer(window):
                    a, b = match.span(lib_group)
                    value = window[a:b]
                    if b - a >= 8 and not _HAS_SPACE.search(value) and _plausible_value(value):
                        yield start + a, start + b


def _near_name_spans(text: str, lowered: Callable[[], str], may: frozenset[int]) -> Iterator[Span]:
    """detect-secrets' ``name = value`` rules, run around ``key``, ``pwd``, ``pass`` and ``token``."""
    rules = [rule for number, rule in zip(_rules().near_names, _library_assignment_rules(), strict=True) if number in may]
    if not rules:
        return
    for start, end in _keyword_windows(text, _ASSIGNMENT_HINT, lowered()):
        window = text[start:end]
        for pattern, lib_group in rules:
            for match in pattern.finditer(window):
                span = _secret_span(match, lib_group)
                if span:
                    yield start + span[0], start + span[1]


# ---- the prefilter: one RE2 pass per text names the rules that may match in it (a superset, see
# adapters/redaction_prefilter.py); only those run, each exactly as it always did, with Python's re.
# A rule that runs only inside keyword windows may match there only where its RE2 form matches the
# text (that form has no anchors or look-arounds, so a match in a window is a match in the text).


class _Rules:
    """Every rule's number in the prefilter."""

    def __init__(self) -> None:
        patterns: list[re.Pattern[str]] = []

        def add(group: list[re.Pattern[str]]) -> tuple[int, ...]:
            patterns.extend(group)
            return tuple(range(len(patterns) - len(group), len(patterns)))

        # The keyword windows are found on the lower-cased text: ignoring case here finds at least
        # as much (the only characters whose lower case is ASCII are A-Z, İ and the Kelvin sign).
        (self.private_key, self.putty, self.assignment, self.named_value, self.keyword_hint, self.near_hint) = add(
            [_PRIVATE_KEY_BLOCK, _PUTTY_KEY, _ASSIGNMENT, _NAMED_VALUE]
            + [re.compile(hint.pattern, re.IGNORECASE) for hint in (_KEYWORD_HINT, _ASSIGNMENT_HINT)]
        )
        self.codex_keywords = add([pattern for pattern, _ in _KEYWORD_RULES])
        self.library_keywords = add([pattern for pattern, _ in _library_keyword_rules()])
        self.near_names = add([pattern for pattern, _ in _library_assignment_rules()])
        self.extra = add([pattern for pattern, _ in _EXTRA_RULES])
        self.library = add([pattern for pattern, _ in _library_rules()])
        self.keywords = frozenset((self.named_value, *self.codex_keywords, *self.library_keywords))
        # The token rules matched anywhere, by number: (pattern, secret group, shortest secret kept).
        self.anywhere: dict[int, tuple[re.Pattern[str], int | None, int]] = {
            **{n: (p, g, 1) for n, (p, g) in zip(self.extra, _EXTRA_RULES, strict=True)},
            **{n: (p, g, 6) for n, (p, g) in zip(self.library, _library_rules(), strict=True)},
        }
        self.patterns = tuple(patterns)
        # The keyword rules' first-pass forms stop at the loop after the name (``token[\w.-]*``), so
        # they hold for every text naming a token; a second pass keeps those loops, for these rules
        # and only on the texts the first named.
        # One set per group: together their DFA grows far larger than the three apart.
        self.keyword_refine = tuple(
            (group, Prefilter([patterns[n] for n in group], word_loops=True))
            for group in ((self.named_value,), self.codex_keywords, self.library_keywords)
        )
        self.prefilter = Prefilter(patterns)
        self.every = frozenset(range(len(patterns)))
        self.shortest = min(_min_width(pattern) for pattern in patterns)


@lru_cache(maxsize=1)
def _rules() -> _Rules:
    return _Rules()


def _min_width(pattern: re.Pattern[str]) -> int:
    from re import _parser  # type: ignore[attr-defined]

    try:
        return int(_parser.parse(pattern.pattern, pattern.flags & ~re.UNICODE).getwidth()[0])
    except Exception:  # pragma: no cover - an unparsable pattern: no length bound
        return 0


def _without_quote_escapes(text: str) -> tuple[str, list[int]]:
    """``text`` with the backslash of each ``\\"`` left out, and where each removal happened in it.

    The second list holds, for each backslash left out, the index in the returned
    text of the quote that followed it (see :func:`_unescaped_index`).
    """
    plain = text.replace('\\"', '"')  # occurrences cannot overlap: the same as dropping each backslash before a quote
    quotes: list[int] = []
    at = text.find('\\"')
    while at >= 0:
        quotes.append(at - len(quotes))
        at = text.find('\\"', at + 2)
    return plain, quotes


def _unescaped_index(quotes: list[int], index: int) -> int:
    """Where the character at ``index`` of the unescaped text is in the original text."""
    return index + bisect_right(quotes, index)


class _Lowered:
    """``text.lower()``, made at the first call (cheaper to set up than ``functools.cache``)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str) -> None:
        self.text = text
        self.value: str | None = None

    def __call__(self) -> str:
        if self.value is None:
            self.value = self.text.lower()
        return self.value


def _find_spans(text: str) -> list[Span]:
    rules = _rules()
    if len(text) < rules.shortest:
        return []
    may = rules.prefilter.candidates(text)
    if may is None:
        may = rules.every  # RE2 could not tell: every rule runs
    elif not may:
        return []
    spans: list[Span] = []
    if rules.private_key in may and "PRIVATE KEY" in text:
        spans.extend(match.span() for match in _PRIVATE_KEY_BLOCK.finditer(text))
    if rules.putty in may and "PuTTY-User-Key-File" in text:
        spans.extend(match.span() for match in _PUTTY_KEY.finditer(text))
    anywhere = rules.anywhere
    for number in may:  # only the rules the prefilter named (the order is lost in _merge's sort)
        rule = anywhere.get(number)
        if rule is not None:
            pattern, group, shortest = rule
            for match in pattern.finditer(text):
                span = _secret_span(match, group)
                if span and span[1] - span[0] >= shortest:
                    spans.append(span)
    near_names = rules.near_hint in may and not may.isdisjoint(rules.near_names)
    if near_names or (rules.keyword_hint in may and not may.isdisjoint(rules.keywords)):
        lowered = _Lowered(text)  # one lower-cased copy for both keyword scans, made when needed
        spans.extend(_keyword_spans(text, lowered, may))
        if near_names:
            spans.extend(_near_name_spans(text, lowered, may))
    if rules.assignment in may:
        spans.extend(_assignment_spans(text))
    return spans


# An operator (the last character of ``:``, ``=`` or ``:=``) with a possible value after it: every match
# of _ASSIGNMENT holds one, and lies between 66 characters (and spaces) before it and the end of the run
# of value characters after it.
_ASSIGNMENT_OPERATOR = re.compile(r"[:=](?=[ \t]*[\"']?[A-Za-z0-9+/_.-]{20})")
_VALUE_RUN = re.compile(r"[ \t]*[\"']?[A-Za-z0-9+/_=.-]*")
_NAME_CHARS = 64


def _assignment_stretches(text: str) -> list[Span]:
    """Disjoint stretches of ``text`` that hold every match of _ASSIGNMENT (searched within them, each is found)."""
    stretches: list[Span] = []
    for operator in _ASSIGNMENT_OPERATOR.finditer(text):
        back = operator.start()
        if back and text[back - 1] == ":":
            back -= 1  # the ':' of ':='
        while back and text[back - 1] in " \t":
            back -= 1
        if back and text[back - 1] in "\"'":
            back -= 1
        start = max(0, back - _NAME_CHARS)
        run = _VALUE_RUN.match(text, operator.end())
        end = min(len(text), (run.end() if run else operator.end()) + 1)  # one more: the look-ahead's character
        if stretches and start <= stretches[-1][1]:
            stretches[-1] = (stretches[-1][0], max(end, stretches[-1][1]))
        else:
            stretches.append((start, end))
    return stretches


def _assignment_spans(text: str) -> Iterator[Span]:
    for start, end in _assignment_stretches(text):
        for match in _ASSIGNMENT.finditer(text, start, end):
            name, value = match.group(1), match.group(2)
            if _ID_NAME.search(name):
                continue
            if _looks_random(name, value):
                yield match.span(2)
            elif "/" in value and not value.startswith("/"):
                # KEY=<secret>/rest in a path (a folder named after an assignment): the segment is the value.
                segment = value.split("/", 1)[0]
                if len(segment) >= 20 and _looks_random(name, segment):
                    yield match.start(2), match.start(2) + len(segment)


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def secret_spans(text: str) -> list[Span]:
    """Where the secrets in ``text`` are: sorted, non-overlapping ``(start, end)`` offsets.

    Overlapping findings are merged; a finding that is already the marker is left out.
    """
    if not text:
        return []
    spans = _find_spans(text)
    if '\\"' in text:
        # JSON inside a JSON string (a tool's arguments): its quotes arrive escaped (\"). Look
        # again with those backslashes left out, and map what is found back onto the text.
        plain, quotes = _without_quote_escapes(text)
        spans += [
            (_unescaped_index(quotes, start), _unescaped_index(quotes, end - 1) + 1)
            for start, end in _find_spans(plain)
            if end > start
        ]
    return [span for span in _merge(spans) if text[span[0] : span[1]] != REDACTED]


def redact(text: str) -> tuple[str, int]:
    """Replace every secret in ``text`` with ``[REDACTED_SECRET]``; return the text and count.

    Overlapping findings count once. Text that already holds the marker is left
    as is, so redacting twice changes nothing.
    """
    if not text:
        return text, 0
    spans = secret_spans(text)
    if not spans:
        return text, 0
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        pieces.append(text[cursor:start])
        pieces.append(REDACTED)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), len(spans)


# Every text field of a transcript that is stored: secrets hide in paths and branch names too
# (a token in a folder name, a password in a remote URL).
ITEM_FIELDS = ("text", "tool", "call_id")
META_FIELDS = (
    "first_user_message", "cwd", "path", "git_branch", "git_remote", "git_commit",
    "agent_version", "origin", "memory_mode", "native_id",
)


def redact_transcript(transcript: Transcript) -> tuple[Transcript, int]:
    """Redact every session-derived text of a transcript; return it and the total count.

    Items' text, tool names and call ids, and every text of the metadata (the
    first user message, cwd, file path, git branch, remote and commit, agent
    version, origin, the agent's session id) are redacted. A native id that
    held a secret becomes ``redacted-<hash>``, so two such sessions stay apart.
    """
    total = 0
    items = []
    seen: dict[str, tuple[str, int]] = {}  # tool names, call ids, the first user message: each text once
    for item in transcript.items:
        update, count = _redacted_fields(item, ITEM_FIELDS, seen)
        total += count
        items.append(item.model_copy(update=update) if update else item)
    meta = transcript.meta
    update, count = _redacted_fields(meta, META_FIELDS, seen)
    if "native_id" in update:
        update["native_id"] = "redacted-" + hashlib.sha256(meta.native_id.encode()).hexdigest()[:24]
    total += count
    if update:
        meta = meta.model_copy(update=update)
    warnings = tuple(redact(note)[0] for note in transcript.warnings)
    return transcript.model_copy(update={"items": tuple(items), "meta": meta, "warnings": warnings}), total


def _redacted_fields(value: Any, names: tuple[str, ...], seen: dict[str, tuple[str, int]]) -> tuple[dict[str, str], int]:
    update: dict[str, str] = {}
    total = 0
    for name in names:
        text = getattr(value, name)
        if isinstance(text, str) and text:
            found = seen.get(text)
            if found is None:
                found = seen[text] = redact(text)
            clean, count = found
            if count:
                update[name] = clean
                total += count
    return update, total


class SecretRedactor:
    """The redactor every service is given: :func:`redact` and :func:`redact_transcript`."""

    def redact(self, text: str) -> tuple[str, int]:
        """The text with its secrets replaced, and how many were."""
        return redact(text)

    def redact_transcript(self, transcript: Transcript) -> tuple[Transcript, int]:
        """The transcript with its session-derived texts redacted, and how many secrets were."""
        return redact_transcript(transcript)
