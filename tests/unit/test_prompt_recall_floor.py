"""The prompt hook's relevance floor (domain/prompt_recall.py): absolute, on meaning and words together, never on rank alone."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

from mnemolog.domain.prompt_recall import bearing, evidence, prompt_text
from mnemolog.domain.recall import ExcerptHit, RecallHit

CHAT = "user: cap the csv export at 5000 rows per file, the reporting database chokes above that\nassistant: " + "Done, " * 80
PROMPT = "the csv export from the reporting database cuts every file short"


def _hit(text: str = CHAT, found_by: tuple[str, ...] = ("meaning", "words"), similarity: float = 0.4, n: int = 0) -> RecallHit:
    excerpt = ExcerptHit(n, uuid4(), n, "codex", f"thread-{n}", "/s.jsonl", 1, 9, datetime(2026, 10, 1, tzinfo=UTC), text)
    return RecallHit("excerpt", 0.03, excerpt=excerpt, found_by=found_by, similarity=similarity)


def test_a_hit_counts_only_when_found_by_meaning_and_by_words_with_enough_of_both() -> None:
    assert evidence(_hit(), PROMPT) is not None
    assert evidence(_hit(found_by=("words",), similarity=0.0), PROMPT) is None, "words alone"
    assert evidence(_hit(found_by=("meaning",)), PROMPT) is None, "meaning alone"
    assert evidence(_hit(similarity=0.1), PROMPT) is None, "a cosine unrelated texts reach"
    assert evidence(_hit(similarity=0.9), "please fix the typo in the README") is None, "no content word shared"
    assert evidence(_hit(similarity=0.3), "the reporting thing") is None, "one shared word is a coincidence"


def test_the_strongest_hits_come_first_and_the_weak_are_left_out_whatever_their_rank() -> None:
    weak, strong = _hit(similarity=0.35, n=1), _hit(similarity=0.6, n=2)
    assert [h.excerpt.n for h in bearing([weak, strong, _hit(found_by=("words",), n=3)], "csv export database")] == [2]
    assert [h.excerpt.n for h in bearing([weak, strong], PROMPT)] == [2, 1]


def test_the_text_stays_within_the_budget_and_keeps_the_users_words_whole() -> None:
    count = lambda text: len(text) // 4  # noqa: E731
    text, kept = prompt_text([_hit()], 300, count)
    assert kept and "5000 rows per file" in text and "Done, Done" in text and "…" in text and count(text) <= 300
    assert prompt_text([_hit()], 30, count) == ("", []), "no room for a useful part"
    assert prompt_text([], 300, count) == ("", [])
