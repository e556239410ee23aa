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
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from typing import Any

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


def _looks_random(name: str, value: str) -> bool:
    """Whether an assigned value is a likely secret rather than a path, hash or id."""
    if _UUID.match(value) or value.startswith(("/", "./", "../", "~")) or "//" in value:
        return False
    if value.count(".") >= 2 and not _SECRET_NAME.search(name):
        return False  # dotted names, versions, hosts
    if _HEX.match(value):
        # Commit hashes and digests are hex too: only a secret-sounding name makes them secret.
        return bool(_HEX_SECRET_NAME.search(name)) and shannon_entropy(value) > 3.0
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


def _keyword_spans(text: str, lowered: str | None = None) -> Iterator[Span]:
    for start, end in _keyword_windows(text, _KEYWORD_HINT, lowered):
        window = text[start:end]
        for pattern, group in _KEYWORD_RULES:
            for match in pattern.finditer(window):
                a, b = match.span(group)
                yield start + a, start + b
        for match in _NAMED_VALUE.finditer(window):
            if _plausible_value(match.group(1)):
                a, b = match.span(1)
                yield start + a, start + b
        for pattern, lib_group in _library_keyword_rules():
            for match in pattern.finditer(window):
                a, b = match.span(lib_group)
                value = window[a:b]
                if b - a >= 8 and not _HAS_SPACE.search(value) and _plausible_value(value):
                    yield start + a, start + b


# ---- the prefilter: a rule runs only on a text holding a literal every match of it contains.
# The literals are read from each compiled pattern (so detect-secrets' rules get them too), and
# the check is a substring test, so a skipped rule is one that could not have matched.

Needs = tuple[frozenset[str], bool] | None  # (any of these literals, compared case-folded), or no filter


def _required(parsed: Any, icase: bool) -> frozenset[str] | None:
    """Literals one of which every match of ``parsed`` contains (None when none can be told)."""
    from re import _constants as c  # type: ignore[attr-defined]

    best: frozenset[str] | None = None

    def consider(found: frozenset[str] | None) -> None:
        nonlocal best
        if found and all(found) and (best is None or min(map(len, found)) > min(map(len, best))):
            best = found

    run: list[str] = []
    for op, arg in parsed:
        if op is c.LITERAL:
            run.append(chr(arg))
            continue
        if op is c.AT:  # zero-width (\b, ^): the literals around it stay adjacent
            continue
        consider(frozenset({"".join(run)}) if run else None)
        run = []
        if op is c.SUBPATTERN:
            _, add_flags, del_flags, sub = arg
            if not (add_flags | del_flags) & c.SRE_FLAG_IGNORECASE:
                consider(_required(sub, icase))
        elif op is c.BRANCH:
            alternatives = [_required(branch, icase) for branch in arg[1]]
            if all(alternatives):
                consider(frozenset().union(*alternatives))  # type: ignore[arg-type]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and arg[0] >= 1:
            consider(_required(arg[2], icase))
    consider(frozenset({"".join(run)}) if run else None)
    return best


@cache
def _needs(pattern: re.Pattern[str]) -> Needs:
    """What ``pattern`` needs in a text before it is worth running."""
    from re import _parser  # type: ignore[attr-defined]

    icase = bool(pattern.flags & re.IGNORECASE)
    try:
        found = _required(_parser.parse(pattern.pattern, pattern.flags & ~re.UNICODE), icase)
    except Exception:  # pragma: no cover - an unparsable pattern simply always runs
        return None
    if not found or (icase and not all(literal.isascii() for literal in found)):
        return None
    return frozenset(literal.lower() for literal in found) if icase else found, icase


def fold(text: str) -> str:
    """``text`` lower-cased so that a case-insensitive ASCII literal found by ``re`` is a substring of it.

    ``re`` also matches İ (U+0130) and ı (U+0131) to i, ſ (U+017F) to s and the
    Kelvin sign to k; ``str.lower`` turns İ into two characters, so those are
    mapped first (tests/unit/test_redaction_prefilter.py checks the list).
    """
    if not text.isascii():
        text = text.replace("\u0130", "i").replace("\u0131", "i").replace("\u017f", "s")
    return text.lower()


class _Text:
    """One text and its folded form, computed once and only if a rule asks for it."""

    __slots__ = ("_folded", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded: str | None = None

    def may_match(self, pattern: re.Pattern[str]) -> bool:
        needs = _needs(pattern)
        if needs is None:
            return True
        literals, icase = needs
        if icase:
            if self._folded is None:
                self._folded = fold(self.text)
            haystack = self._folded
        else:
            haystack = self.text
        return any(literal in haystack for literal in literals)


def _without_quote_escapes(text: str) -> tuple[str, list[int]]:
    """``text`` with the backslash of each ``\\"`` left out, and where each kept character was."""
    kept: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        if char == "\\" and text.startswith('"', index + 1):
            continue  # the quote after it is kept
        kept.append(char)
        where.append(index)
    return "".join(kept), where


def _find_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    probe = _Text(text)
    if "PRIVATE KEY" in text:
        spans.extend(match.span() for match in _PRIVATE_KEY_BLOCK.finditer(text))
    if "PuTTY-User-Key-File" in text:
        spans.extend(match.span() for match in _PUTTY_KEY.finditer(text))
    for pattern, group in _EXTRA_RULES:
        if not probe.may_match(pattern):
            continue
        for match in pattern.finditer(text):
            span = _secret_span(match, group)
            if span:
                spans.append(span)
    for pattern, lib_group in _library_rules():
        if not probe.may_match(pattern):
            continue
        for match in pattern.finditer(text):
            span = _secret_span(match, lib_group)
            if span and span[1] - span[0] >= 6:
                spans.append(span)
    lowered = text.lower()  # one lower-cased copy for both keyword scans
    spans.extend(_keyword_spans(text, lowered))
    for start, end in _keyword_windows(text, _ASSIGNMENT_HINT, lowered):
        window = text[start:end]
        for pattern, lib_group in _library_assignment_rules():
            for match in pattern.finditer(window):
                span = _secret_span(match, lib_group)
                if span:
                    spans.append((start + span[0], start + span[1]))
    for match in _ASSIGNMENT.finditer(text) if probe.may_match(_ASSIGNMENT) else ():
        name, value = match.group(1), match.group(2)
        if _ID_NAME.search(name):
            continue
        if _looks_random(name, value):
            spans.append(match.span(2))
        elif "/" in value and not value.startswith("/"):
            # KEY=<secret>/rest in a path (a folder named after an assignment): the segment is the value.
            segment = value.split("/", 1)[0]
            if len(segment) >= 20 and _looks_random(name, segment):
                spans.append((match.start(2), match.start(2) + len(segment)))
    return spans


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
        plain, where = _without_quote_escapes(text)
        spans += [(where[start], where[end - 1] + 1) for start, end in _find_spans(plain) if end > start]
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
    for item in transcript.items:
        update, count = _redacted_fields(item, ITEM_FIELDS)
        total += count
        items.append(item.model_copy(update=update) if update else item)
    meta = transcript.meta
    update, count = _redacted_fields(meta, META_FIELDS)
    if "native_id" in update:
        update["native_id"] = "redacted-" + hashlib.sha256(meta.native_id.encode()).hexdigest()[:24]
    total += count
    if update:
        meta = meta.model_copy(update=update)
    warnings = tuple(redact(note)[0] for note in transcript.warnings)
    return transcript.model_copy(update={"items": tuple(items), "meta": meta, "warnings": warnings}), total


def _redacted_fields(value: Any, names: tuple[str, ...]) -> tuple[dict[str, str], int]:
    update: dict[str, str] = {}
    total = 0
    for name in names:
        text = getattr(value, name)
        if isinstance(text, str) and text:
            clean, count = redact(text)
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
