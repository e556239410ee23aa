"""Sole-evidence retirement: an item leaves memory when the sessions going away were all its evidence."""

from __future__ import annotations

from mnemolog.domain.evidence import sole_evidence_items

from .builders import item, uid

A, B, C = uid("session a"), uid("session b"), uid("session c")


def orphans(items: list, gone: set, live: set | None) -> list[str]:
    """The texts of the items that lose all their evidence."""
    return [i.text for i in sole_evidence_items(items, frozenset(gone), None if live is None else frozenset(live))]


def test_an_item_whose_evidence_is_all_gone_is_an_orphan() -> None:
    assert orphans([item("x", text="only a", evidence=[A]), item("y", text="a and b", evidence=[A, B])], {A, B}, None) == [
        "only a",
        "a and b",
    ]


def test_an_item_with_evidence_left_stays() -> None:
    assert orphans([item("x", text="a and b", evidence=[A, B])], {A}, None) == []


def test_when_live_sessions_are_known_evidence_left_must_be_live() -> None:
    both = item("x", text="a and b", evidence=[A, B])
    assert orphans([both], {A}, live={C}) == ["a and b"]  # B was already gone (pruned before, deleted, ...)
    assert orphans([both], {A}, live={B}) == []


def test_when_live_sessions_are_unknown_evidence_left_counts() -> None:
    assert orphans([item("x", text="a and b", evidence=[A, B])], {A}, live=None) == []


def test_items_the_sessions_going_away_never_supported_are_untouched() -> None:
    unrelated = item("x", text="b only", evidence=[B])
    assert orphans([unrelated], {A}, live=set()) == []  # B is not live, but this removal is not about it


def test_items_with_no_evidence_are_untouched() -> None:
    assert orphans([item("x", text="a user's item", evidence=())], {A}, live=set()) == []
