"""Okapi BM25 over plain documents: the baseline memory is measured against (``mnemolog eval``).

The eval asks: would plain BM25 over the raw chats have found the decision?
So this is the textbook ranking (k1 = 1.2, b = 0.75, IDF with the +1 that
keeps it positive), over words folded to lower case, with nothing of
mnemolog's own (no stemming, no field weights, no excerpts).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"\w+", re.UNICODE)
K1 = 1.2
B = 0.75


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased."""
    return [w.casefold() for w in _WORD.findall(text)]


class BM25:
    """An index of documents, ranked for a query by BM25."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.counts = [Counter(words(d)) for d in documents]
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0
        frequency: Counter[str] = Counter()
        for counts in self.counts:
            frequency.update(counts.keys())
        n = len(documents)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}

    def scores(self, query: str) -> list[float]:
        """Each document's score for ``query`` (0 for one sharing no word with it)."""
        terms = set(words(query))
        out = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            norm = K1 * (1 - B + B * length / self.average) if self.average else K1
            out.append(sum(self.idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in terms if counts.get(t)))
        return out

    def top(self, query: str, limit: int) -> list[int]:
        """The indexes of the best ``limit`` documents for ``query`` (ties to the earlier document)."""
        scored = self.scores(query)
        ranked = sorted((i for i, s in enumerate(scored) if s > 0), key=lambda i: (-scored[i], i))
        return ranked[:limit]
