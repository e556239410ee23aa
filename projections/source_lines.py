"""Where in a session an item came from: the transcript entries that share the most words with it.

Extraction records which sessions an item rests on, not which of their lines;
this read finds, in each evidence session's stored transcript (redacted at
ingest, scrubbed by every tombstone since), the entries the item's words come
from, in session order, each as a short excerpt around the first shared word.
A deleted session shows none (a person asked for it to be gone), and every
excerpt passes through the tombstone matcher.
"""

from __future__ import annotations

import math
import re
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.history import SourceLine
from mnemolog.domain.session import Session
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.explain import scrub_all

_WORD = re.compile(r"\w+")
MAX_LINES = 3
EXCERPT = 240
# Words too common to tell one entry from another.
COMMON = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "that", "the", "this", "to", "was", "were", "with", "you", "i"])


def _words(text: str) -> set[str]:
    # Scoring only: plain case-folded words are enough (and fast on long tool outputs).
    return {w for w in _WORD.findall(text.casefold()) if w not in COMMON}


def _excerpt(text: str, wanted: set[str]) -> str:
    first = next((m.start() for m in _WORD.finditer(text) if m.group(0).casefold() in wanted), 0)
    start = max(first - EXCERPT // 4, 0)
    piece = " ".join(text[start : start + EXCERPT].split())
    return ("… " if start else "") + piece + (" …" if start + EXCERPT < len(text) else "")


def source_lines(app: MnemologApp, session_id: UUID, item_text: str, matcher: TombstoneMatcher, limit: int = MAX_LINES) -> list[SourceLine]:
    """The (at most ``limit``) entries of the session that share the most (and the rarest) words with ``item_text``, in session order."""
    wanted = _words(item_text)
    if not wanted:
        return []
    session = app.find(session_id)
    if not isinstance(session, Session) or session.deleted:
        return []
    texts = [scrub_all(entry.text, matcher) for entry in session.transcript]
    found = [_words(text) for text in texts]
    # Rarer words say more: a word in every entry (the project's path) tells none apart.
    seen_in: dict[str, int] = {}
    for words in found:
        for word in wanted & words:
            seen_in[word] = seen_in.get(word, 0) + 1
    weight = {word: math.log(1 + len(found) / n) for word, n in seen_in.items()}
    scored = []
    for index, (entry, text, words) in enumerate(zip(session.transcript, texts, found, strict=True)):
        shared = wanted & words
        if shared:
            scored.append((sum(weight[w] for w in shared), index, entry, text, len(shared)))
    best = sorted(scored, key=lambda s: (-s[0], s[1]))[:limit]
    return [
        SourceLine(index + 1, entry.kind.value, entry.tool, _excerpt(text, wanted), shared)
        for _, index, entry, text, shared in sorted(best, key=lambda s: s[1])
    ]
