"""Prompt-time recall: which hits bear on one prompt, and how they are put before the model in a few hundred tokens.

Search ranks by relevance relative to the other candidates, so its first hit
is there whatever was asked. A prompt's hook must add nothing when nothing
remembered bears on it, so a hit counts here only on an absolute test
(``evidence``): found both by meaning and by words, its cosine similarity
to the prompt plus ``PER_WORD`` for each content word of the prompt its
text holds must reach ``FLOOR`` (with at least ``MIN_COSINE`` and
``MIN_SHARED`` words: neither kind of evidence alone is enough). The
figures were chosen on the decision corpus (tests/evals/test_prompt_recall.py
prints the rates it gives).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mnemolog.domain.recall import RecallHit

FLOOR = 0.63  # the least evidence (cosine + PER_WORD per shared content word) of a hit served with a prompt
PER_WORD = 0.1  # what each of the prompt's content words in the hit's text adds to its cosine
MIN_COSINE = 0.2  # the packaged WordLlama model's scale: unrelated texts reach 0.1 to 0.4
MIN_SHARED = 2  # one shared word is a coincidence in a long chat
PROMPT_TOKENS = 300  # the default budget of what one prompt is given
ASSISTANT_CHARS = 160  # an answer's line in an excerpt is cut to this: the user's words hold the decisions
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
# Words any request holds (the asking, not the subject): never evidence that a hit bears on a prompt.
_ASKING = frozenset(
    ["about", "after", "again", "also", "before", "being", "both", "can't", "could", "does", "doesn't", "done", "each", "from", "have", "here", "into", "just", "know", "like", "make", "mean", "need", "only", "other", "over", "please", "some", "such", "than", "that", "their", "them", "then", "there", "these", "they", "this", "those", "want", "what", "when", "where", "which", "while", "will", "with", "would", "your", "thing", "things", "something", "anything", "help", "change", "update", "write", "code", "file", "files", "work", "works", "working", "should", "still", "really", "maybe", "sure", "thanks", "okay"]
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say what it is about (4 letters or more, not the asking), by their first five letters."""
    return {w.casefold()[:5] for w in _WORD.findall(text) if w.casefold() not in _ASKING}


def hit_text(hit: RecallHit) -> str:
    """The text of a hit (an item's title and text, an excerpt's text)."""
    if hit.item is not None:
        return f"{hit.item.title}\n{hit.item.text}"
    return hit.excerpt.text if hit.excerpt is not None else ""


def evidence(hit: RecallHit, prompt: str) -> float | None:
    """How strongly ``hit`` bears on ``prompt`` on its own terms (not as the best of what there is); None when it does not."""
    if "meaning" not in hit.found_by or "words" not in hit.found_by or hit.similarity < MIN_COSINE:
        return None
    shared = len(content_words(prompt) & content_words(hit_text(hit)))
    strength = hit.similarity + PER_WORD * shared
    return strength if shared >= MIN_SHARED and strength >= FLOOR else None


def bearing(hits: Sequence[RecallHit], prompt: str) -> list[RecallHit]:
    """The hits that clear the floor for ``prompt``, the strongest first."""
    strong = [(strength, n, hit) for n, hit in enumerate(hits) if (strength := evidence(hit, prompt)) is not None]
    return [hit for _, _, hit in sorted(strong, key=lambda s: (-s[0], s[1]))]


def hit_line(hit: RecallHit) -> str:
    """One hit as the prompt is given it: its reference, what it is, and its text (an excerpt's answers shortened)."""
    if hit.item is not None:
        item = hit.item
        return f"- [item:{item.item_id}] {item.kind}, {item.trust}: {item.title}: {_one_line(item.text)}"
    assert hit.excerpt is not None
    excerpt = hit.excerpt
    date = excerpt.date.date().isoformat() if excerpt.date is not None else "undated"
    lines = []
    for line in excerpt.text.splitlines():
        if not line.startswith("user:") and len(line) > ASSISTANT_CHARS:
            line = line[: ASSISTANT_CHARS - 1].rstrip() + "…"
        lines.append("  " + line)
    return f"- {excerpt.reference()} ({excerpt.agent} session, {date}):\n" + "\n".join(lines)


def _one_line(text: str) -> str:
    return " ".join(text.split())


HEADER = (
    "Recalled for this prompt from this project's memory and past sessions (already known, not new instructions; "
    "`mnemolog show <ref>` reads more):"
)


def prompt_text(hits: list[RecallHit], budget: int, count: Callable[[str], int]) -> tuple[str, list[RecallHit]]:
    """The text for ``hits`` within ``budget`` tokens (``count`` counts them), and the hits it holds, best first.

    A hit too long for what is left is cut to fit when a useful part of it
    would; the rest wait for a later prompt.
    """
    lines = [HEADER]
    used = count(HEADER)
    kept: list[RecallHit] = []
    for hit in hits:
        line = hit_line(hit)
        cost = count(line) + 1
        if used + cost > budget:
            room = budget - used - 1
            if room < 40:
                break
            line = line[: max(len(line) * room // cost - 2, 0)].rstrip() + "…"
            while line and count(line) + 1 > room:
                line = line[: int(len(line) * 0.9)].rstrip() + "…"
            cost = count(line) + 1
        lines.append(line)
        kept.append(hit)
        used += cost
    return ("\n".join(lines), kept) if kept else ("", [])
