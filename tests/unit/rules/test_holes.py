"""No re-learning with holes: lines a tombstone cut feed no model, edits carrying a hole drop, items carrying one retire."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from mnemolog.domain.holes import has_hole, transcript_without_holes, without_holes
from mnemolog.domain.plan_checks import code_retirements, screen_plan
from mnemolog.domain.sealing import ERASED
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript, TranscriptItem

from .builders import FAST, add, forgetting, item, matcher, plan, revise, uid

SECRET = "make test-fast"
PROJECT = "git:example.com/team/api"


def test_lines_with_a_mark_are_left_out_and_the_others_kept() -> None:
    text = f"Always run {FORGOTTEN_MARK} before committing.\nUse ruff for linting.\n- `{ERASED}` passed"
    assert without_holes(text) == "Use ruff for linting."
    assert without_holes("No hole here.\nNone at all.") == "No hole here.\nNone at all."
    assert has_hole(f"a {FORGOTTEN_MARK}") and has_hole(ERASED) and not has_hole("forgotten things") and not has_hole(None)


@FAST
@given(st.lists(st.sampled_from(["run the tests", f"use {FORGOTTEN_MARK}", "lint", f"{ERASED} ok", ""]), max_size=8))
def test_no_line_kept_holds_a_mark(lines: list[str]) -> None:
    kept = without_holes("\n".join(lines))
    assert not has_hole(kept)
    assert all(line in lines for line in kept.split("\n") if line)


def test_a_transcript_loses_the_cut_lines_and_the_items_left_empty() -> None:
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id="t", path="/p", first_user_message=f"Use {FORGOTTEN_MARK} please"),
        items=(
            TranscriptItem(kind=ItemKind.USER, text=f"Use {FORGOTTEN_MARK} please"),
            TranscriptItem(kind=ItemKind.USER, text=f"Run {FORGOTTEN_MARK}.\nThen push."),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, text="12 passed"),
        ),
    )
    shown = transcript_without_holes(transcript)
    assert [i.text for i in shown.items] == ["Then push.", "12 passed"]
    assert shown.meta.first_user_message is None
    clean = transcript.model_copy(update={"items": transcript.items[2:], "meta": transcript.meta.model_copy(update={"first_user_message": None})})
    assert transcript_without_holes(clean) is clean


def test_an_edit_carrying_a_hole_is_dropped_and_the_rest_of_the_plan_stays() -> None:
    target = item("I1", scope=PROJECT, evidence=[uid("s")])
    holed_add = add(uid("s"), scope=PROJECT, text=f"Always use {FORGOTTEN_MARK} for tests.")
    holed_revise = revise("I1", uid("s"), keywords=("tests", FORGOTTEN_MARK))
    good = add(uid("s"), scope=PROJECT, text="Use ruff.")
    screened = screen_plan(
        plan(holed_add, good, holed_revise), handles={"I1": target},
        selected_scopes={uid("s"): PROJECT}, note_scopes={}, matcher=matcher(),
    )
    assert screened.plan.edits == (good,) and not screened.refused
    assert [d.item_id for d in screened.dropped] == [None, target.item_id]
    assert all(FORGOTTEN_MARK not in d.reason + d.edit for d in screened.dropped)


def test_an_item_carrying_a_hole_retires_even_when_no_tombstone_matches_it() -> None:
    holed = item("holed", text=f"`{FORGOTTEN_MARK}` passed", evidence=[uid("s")])
    fine = item("fine", text="`ruff check .` passed", evidence=[uid("s")])
    retired = code_retirements([holed, fine], frozenset({uid("s")}), forgetting(SECRET), frozenset())
    assert [r.item_id for r in retired] == [holed.item_id]
    assert "hole" in retired[0].reason
