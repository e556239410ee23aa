"""How search orders items and history excerpts (domain/recall.py): fusion, ties, one excerpt a session, the floor."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from mnemolog.domain.reads import ItemRow
from mnemolog.domain.recall import FLOOR, ExcerptHit, fuse, order


def an_item(ref: str, trust: str = "proposed", use: int = 0) -> ItemRow:
    return ItemRow(item_id=UUID(ref), kind="knowledge", scope="p", task_group="", title="", text=ref, keywords=(), evidence=(), trust=trust, use_count=use)


def an_excerpt(ref: str, session: UUID, day: int) -> ExcerptHit:
    return ExcerptHit(int(ref), session, 0, "codex", str(session), "/s.jsonl", 1, 2, datetime(2026, 10, day, tzinfo=UTC), f"excerpt {ref}")


I1, I2 = str(uuid4()), str(uuid4())


def test_a_text_found_by_words_and_by_meaning_outranks_one_found_by_either() -> None:
    items = {I1: an_item(I1), I2: an_item(I2)}
    hits = order(fuse([I1, I2], [], [("item", I2, 0.9)]), items, {}, 10)

    assert [str(h.item.item_id) for h in hits if h.item] == [I2, I1]
    assert hits[0].found_by == ("meaning", "words")


def test_an_item_goes_before_an_excerpt_of_equal_relevance() -> None:
    session = uuid4()
    hits = order(fuse([I1], ["7"], []), {I1: an_item(I1)}, {"7": an_excerpt("7", session, 1)}, 10)

    assert [h.kind for h in hits] == ["item", "excerpt"]


def test_a_session_gives_one_excerpt_its_best() -> None:
    session, other = uuid4(), uuid4()
    excerpts = {"1": an_excerpt("1", session, 1), "2": an_excerpt("2", session, 1), "3": an_excerpt("3", other, 1)}
    hits = order(fuse([], ["2", "1", "3"], []), {}, excerpts, 10)

    assert [h.excerpt.excerpt_id for h in hits if h.excerpt] == [2, 3]


def test_the_later_of_two_equally_relevant_chats_comes_first() -> None:
    old, new = uuid4(), uuid4()
    excerpts = {"1": an_excerpt("1", old, 1), "2": an_excerpt("2", new, 20)}
    # the older chat matched the words a little better, the later one is the decision in force
    hits = order(fuse([], ["1", "2"], [("excerpt", "2", 0.8), ("excerpt", "1", 0.79)]), {}, excerpts, 10)

    assert [h.excerpt.excerpt_id for h in hits if h.excerpt] == [2, 1]


def test_a_text_found_only_by_meaning_must_clear_the_floor() -> None:
    items = {I1: an_item(I1), I2: an_item(I2)}
    hits = order(fuse([], [], [("item", I1, FLOOR + 0.05), ("item", I2, FLOOR - 0.05)]), items, {}, 10)

    assert [str(h.item.item_id) for h in hits if h.item] == [I1]


def test_trust_then_use_break_ties_among_items() -> None:
    items = {I1: an_item(I1, "proposed", 5), I2: an_item(I2, "accepted", 0)}
    hits = order(fuse([], [], [("item", I1, 0.9)]) + fuse([], [], [("item", I2, 0.9)]), items, {}, 10)

    assert [str(h.item.item_id) for h in hits if h.item] == [I2, I1]


def test_a_later_chat_on_another_subject_stays_where_it_ranks() -> None:
    old, new = uuid4(), uuid4()
    first = ExcerptHit(1, old, 0, "codex", "a", "/a", 1, 2, datetime(2026, 10, 1, tzinfo=UTC), "cap the export at 5000 rows per file")
    later = ExcerptHit(2, new, 0, "codex", "b", "/b", 1, 2, datetime(2026, 11, 1, tzinfo=UTC), "dark mode toggle in settings page")
    hits = order(fuse([], ["1", "2"], []), {}, {"1": first, "2": later}, 10)

    assert [h.excerpt.excerpt_id for h in hits if h.excerpt] == [1, 2]


def test_a_candidate_whose_text_the_reads_no_longer_give_is_left_out_and_the_similarity_is_kept() -> None:
    # Another process re-projected a session between the index's read and the excerpts' own: its old ids are gone.
    session = uuid4()
    hits = order(fuse([], ["7"], [("excerpt", "8", 0.7), ("excerpt", "7", 0.5)]), {}, {"7": an_excerpt("7", session, 1)}, 10)

    assert [(h.excerpt.excerpt_id, h.found_by, h.similarity) for h in hits if h.excerpt] == [(7, ("meaning", "words"), 0.5)]
