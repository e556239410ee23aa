"""Short ids, git-style: any unique prefix of an id names it; an ambiguous one names its candidates."""

from __future__ import annotations

from uuid import UUID

from mnemolog.domain.reads import IdReads

MIN_PREFIX = 4  # as git: shorter prefixes are too likely to be ambiguous
SHORT = 8  # how many characters the CLI prints of an id
_SINGULAR = {"items": "item", "sessions": "session", "notes": "note", "tombstones": "tombstone", "runs": "run"}


class UnknownId(LookupError):
    """No id of that kind starts with the reference."""


class AmbiguousId(LookupError):
    """More than one id starts with the reference; ``candidates`` lists them."""

    def __init__(self, message: str, candidates: tuple[UUID, ...]) -> None:
        super().__init__(message)
        self.candidates = candidates


def normalised(reference: str) -> str:
    """The id text in ``<id>``, ``item:<id>`` or ``[item:<id>]`` (any kind), lowercased."""
    text = reference.strip().strip("[]").strip().lower()
    for kind in _SINGULAR.values():
        text = text.removeprefix(f"{kind}:")
    return text.strip()


def resolve_id(reads: IdReads, what: str, reference: str, project: str | None = None) -> UUID:
    """The one id of ``what`` (``items``, ``sessions``, ...) that ``reference`` names: a whole id or a prefix.

    Raises ``UnknownId`` when none matches (or the prefix is shorter than
    ``MIN_PREFIX`` characters or not hex), ``AmbiguousId`` with the
    candidates when several do. With ``project``, items and tombstones of
    other projects are not found (as ``show`` does not find them).
    """
    name = _SINGULAR.get(what, what)
    text = normalised(reference)
    try:
        whole = UUID(text)
    except ValueError:
        whole = None
    if whole is not None:
        text = str(whole)
    elif len(text.replace("-", "")) < MIN_PREFIX or any(c not in "0123456789abcdef-" for c in text):
        raise UnknownId(f"no {name} {reference.strip()[:40]!r} (give its id or at least {MIN_PREFIX} of its first characters)")
    found = reads.ids_with_prefix(what, text, project, limit=10)
    if whole is not None and whole in found:
        return whole
    if not found:
        raise UnknownId(f"no {name} {text}")
    if len(found) > 1:
        shown = ", ".join(str(c)[: max(SHORT, len(text) + 4)] for c in found)
        raise AmbiguousId(f"{name} prefix {text} is ambiguous: {shown}", tuple(found))
    return found[0]
