"""Plan checks: what code refuses in a consolidation plan, drops from it, and retires on its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from hypothesis import given
from hypothesis import strategies as st
from mnemolog.domain.consolidation import Override
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.plan_checks import (
    ScreenedPlan,
    code_retirements,
    describe_edit,
    screen_plan,
)
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, reaches

from .builders import API, FAST, WEB, add, forgetting, item, matcher, plan, revise, uid

S_API = uid("session in api")
S_WEB = uid("session in web")
NOTE = uid("a global note")
SELECTED = {S_API: API, S_WEB: WEB}
SECRET = "blue falcon 42"
I1 = item("I1", scope=API, evidence=[S_API])
I2 = item("I2", scope=GLOBAL_SCOPE, evidence=[S_API, S_WEB])
HANDLES = {"I1": I1, "I2": I2}


def rejected(screened: ScreenedPlan) -> list[Override]:
    """Everything the screening turned down (dropped or refusing the plan), in the plan's order."""
    return sorted(screened.rejected, key=lambda o: int(o.edit.split(":", 1)[0].removeprefix("edit ")))


def check_plan(proposed: ConsolidationPlan, **context: Any) -> list[Override]:
    """What production's ``screen_plan`` turns down in ``proposed``, save edits of unknown handles (see below)."""
    return [o for o in rejected(screen_plan(proposed, **context)) if not o.reason.startswith("unknown item handle")]


def droppable_edits(proposed: ConsolidationPlan, handles: Mapping[str, ItemRow]) -> tuple[ConsolidationPlan, list[Override]]:
    """The edits ``screen_plan`` keeps and drops when every edit's evidence is in order: what it drops by handle alone."""
    screened = screen_plan(proposed, handles=handles, selected_scopes=SELECTED, note_scopes={}, matcher=matcher())
    assert not screened.refusals
    return screened.plan, list(screened.dropped)


def problems(*edits: Edit, forgotten: TombstoneMatcher | None = None) -> list[str]:
    found = check_plan(
        plan(*edits),
        handles=HANDLES,
        selected_scopes=SELECTED,
        note_scopes={NOTE: GLOBAL_SCOPE},
        matcher=forgotten or matcher(),
    )
    assert all(o.action == "rejected" for o in found)
    return [f"{o.edit}: {o.reason}" for o in found]


def test_a_plan_within_the_rules_has_no_problem() -> None:
    assert problems(
        add(S_API, scope=API),
        revise("I1", S_API, text="Run make test and make lint."),
        Edit(op="retire", target="I2", reason="stale"),
    ) == []


def test_evidence_must_name_selected_sessions() -> None:
    stranger = uid("a session that was not selected")
    assert problems(add(S_API, stranger, scope=API)) == [
        f"edit 1: add (knowledge, scope {API}): evidence names sessions that were not selected: {stranger}"
    ]
    assert problems(add("not-a-session-id", scope=API)) == [
        f"edit 1: add (knowledge, scope {API}): evidence names sessions that were not selected: not-a-session-id"
    ]


def test_an_add_or_revise_needs_evidence() -> None:
    assert problems(add(scope=API), revise("I1")) == [
        f"edit 1: add (knowledge, scope {API}): no evidence",
        "edit 2: revise I1 (knowledge, scope global): no evidence",
    ]


def test_retire_and_invalidate_need_no_evidence() -> None:
    assert problems(Edit(op="retire", target="I1"), Edit(op="invalidate", target="I2")) == []


def test_a_project_item_needs_evidence_from_its_project() -> None:
    [problem] = problems(add(S_WEB, scope=API))
    assert problem.endswith(f"scope {API} is not covered by its evidence (from {WEB})")


def test_a_revise_is_judged_by_its_targets_scope_not_the_scope_it_names() -> None:
    assert problems(revise("I1", S_API, scope=WEB)) == []
    [problem] = problems(revise("I1", S_WEB, scope=WEB))
    assert f"scope {API} is not covered" in problem


def test_a_global_item_needs_two_projects_a_global_note_or_a_preference() -> None:
    [problem] = problems(add(S_API, scope=GLOBAL_SCOPE))
    assert problem.endswith("a global item needs evidence from more than one project or an explicit user statement")
    assert problems(add(S_API, S_WEB, scope=GLOBAL_SCOPE)) == []
    assert problems(add(S_API, NOTE, scope=GLOBAL_SCOPE)) == []
    assert problems(add(NOTE, scope=GLOBAL_SCOPE)) == []
    assert problems(add(S_API, scope=GLOBAL_SCOPE, kind=ItemKindName.PREFERENCE)) == []


def test_two_sessions_of_one_project_do_not_make_an_item_global() -> None:
    other = uid("another api session")
    found = check_plan(
        plan(add(S_API, other, scope=GLOBAL_SCOPE)),
        handles={},
        selected_scopes={S_API: API, other: API},
        note_scopes={},
        matcher=matcher(),
    )
    assert [o.reason for o in found] == ["a global item needs evidence from more than one project or an explicit user statement"]


def test_edits_of_unknown_handles_are_dropped_on_their_own() -> None:
    assert problems(revise("I9", S_API), Edit(op="retire", target="I9")) == []
    dropped = rejected(screen_plan(plan(revise("I9", S_API)), handles=HANDLES, selected_scopes=SELECTED, note_scopes={}, matcher=matcher()))
    assert [o.reason for o in dropped] == ["unknown item handle 'I9'"]


def test_every_broken_edit_is_reported_with_its_position() -> None:
    found = problems(add(S_API, scope=API), add(scope=API), add(S_WEB, scope=API))
    assert [p.split(":")[0] for p in found] == ["edit 2", "edit 3"]


def test_a_global_tombstone_rejects_the_value_in_any_field_of_any_scope() -> None:
    forgotten = forgetting(SECRET)
    carriers = [
        add(S_API, scope=API, text=f"Deploy with {SECRET}."),
        add(S_API, scope=API, title="BLUE-falcon_42? no: Blue, Falcon; 42"),
        add(S_API, scope=API, keywords=("deploy", "blue falcon 42")),
        add(S_API, scope=API, task_group="blue.falcon.42"),
        add(S_API, S_WEB, scope=GLOBAL_SCOPE, text=f"({SECRET.upper()})"),
        revise("I2", S_API, S_WEB, text=f"now {SECRET}"),
    ]
    for edit in carriers:
        assert problems(edit, forgotten=forgotten) == [
            f"{describe_edit(edit, 0)}: the edit contains a forgotten value (tombstone)"
        ], edit


def test_the_title_field_above_really_carries_the_value() -> None:
    # Underscores separate words: "BLUE-falcon_42" carries the value, and so does the text after "no:".
    assert forgetting(SECRET).contains("Blue, Falcon; 42", GLOBAL_SCOPE)
    assert forgetting(SECRET).contains("BLUE-falcon_42", GLOBAL_SCOPE)
    assert not forgetting(SECRET).contains("BLUE-falcon_4", GLOBAL_SCOPE)


def test_a_project_tombstone_rejects_the_value_on_that_projects_items() -> None:
    forgotten = forgetting(SECRET, API)
    assert problems(add(S_API, scope=API, text=f"Deploy with {SECRET}."), forgotten=forgotten) != []
    # a revise of an API item is judged in API, whatever scope the edit names
    assert problems(revise("I1", S_API, scope=GLOBAL_SCOPE, text=SECRET), forgotten=forgotten) != []


def test_a_project_tombstone_does_not_keep_another_projects_item_out() -> None:
    assert problems(add(S_WEB, scope=WEB, text=f"Deploy with {SECRET}."), forgotten=forgetting(SECRET, API)) == []


def test_a_project_tombstone_does_not_keep_a_global_item_out_of_the_store() -> None:
    # Global items are read by every project: the readers of API withhold it (see ``reaches``).
    edit = add(S_API, S_WEB, scope=GLOBAL_SCOPE, text=f"Deploy with {SECRET}.")
    assert problems(edit, forgotten=forgetting(SECRET, API)) == []
    assert problems(revise("I2", S_API, S_WEB, text=SECRET), forgotten=forgetting(SECRET, API)) == []


def test_rejections_never_repeat_the_forgotten_value() -> None:
    forgotten = forgetting(SECRET)
    found = check_plan(
        plan(add(S_API, scope=API, text=SECRET, title=SECRET, reason=SECRET)),
        handles=HANDLES,
        selected_scopes=SELECTED,
        note_scopes={},
        matcher=forgotten,
    )
    assert found and not any(forgotten.contains(o.model_dump_json(), GLOBAL_SCOPE) for o in found)


# --- what screen_plan drops by handle --------------------------------------------------------------


def test_an_edit_of_an_unknown_handle_is_dropped_and_the_rest_kept() -> None:
    kept, dropped = droppable_edits(
        plan(add(S_API, scope=API), revise("I9", S_API), Edit(op="retire", target=None), revise("I1", S_API)), HANDLES
    )
    assert [(e.op, e.target) for e in kept.edits] == [("add", None), ("revise", "I1")]
    assert [(o.action, o.reason, o.edit, o.item_id) for o in dropped] == [
        ("rejected", "unknown item handle 'I9'", "edit 2: revise I9 (knowledge, scope global)", None),
        ("rejected", "unknown item handle None", "edit 3: retire (knowledge, scope global)", None),
    ]


def test_a_second_edit_of_one_item_is_dropped() -> None:
    kept, dropped = droppable_edits(
        plan(revise("I1", S_API), Edit(op="retire", target="I1"), Edit(op="invalidate", target="I2")), HANDLES
    )
    assert [(e.op, e.target) for e in kept.edits] == [("revise", "I1"), ("invalidate", "I2")]
    assert [(o.reason, o.item_id) for o in dropped] == [("I1 is already edited by this plan", I1.item_id)]


def test_a_model_neither_retires_nor_invalidates_a_pinned_item_but_may_revise_it() -> None:
    from dataclasses import replace

    pinned = {"I1": replace(I1, pinned=True), "I2": replace(I2, pinned=True)}
    kept, dropped = droppable_edits(plan(Edit(op="retire", target="I1"), Edit(op="invalidate", target="I2")), pinned)
    assert kept.edits == ()
    assert [(o.reason, o.item_id) for o in dropped] == [
        ("I1 is pinned by the user: kept (unpin it to let it go)", I1.item_id),
        ("I2 is pinned by the user: kept (unpin it to let it go)", I2.item_id),
    ]
    kept, dropped = droppable_edits(plan(revise("I1", S_API)), pinned)
    assert [(e.op, e.target) for e in kept.edits] == [("revise", "I1")] and dropped == []


def test_adds_are_never_dropped_for_a_handle() -> None:
    screened = screen_plan(
        plan(add(S_API, scope=API), add(scope=API), add("junk")), handles=HANDLES, selected_scopes=SELECTED, note_scopes={}, matcher=matcher()
    )
    assert screened.plan.edits[0] == add(S_API, scope=API)
    assert not [o for o in screened.rejected if "handle" in o.reason or "already edited" in o.reason or "pinned" in o.reason]


# --- code_retirements --------------------------------------------------------------


def retired(items: list, live: set, forgotten: TombstoneMatcher | None = None, touched: set | None = None) -> list:
    found = code_retirements(items, frozenset(live), forgotten or matcher(), frozenset(touched or ()))
    assert all(o.action == "retired" for o in found)
    return [(o.item_id, o.reason) for o in found]


def test_an_item_whose_evidence_is_all_gone_is_retired() -> None:
    gone = item("gone", evidence=[uid("pruned 1"), uid("pruned 2")])
    kept = item("kept", evidence=[uid("pruned 1"), S_API])
    assert retired([gone, kept], {S_API}) == [
        (gone.item_id, "all evidence is gone (deleted, pruned, polluted or withdrawn)")
    ]


def test_an_item_with_no_evidence_is_not_retired_for_it() -> None:
    assert retired([item("a user's item", evidence=())], set()) == []


def test_an_item_carrying_a_forgotten_value_is_retired() -> None:
    carrier = item("carrier", scope=API, evidence=[S_API], keywords=("Blue", "FALCON", "42"))
    clean = item("clean", scope=API, evidence=[S_API])
    expected = [(carrier.item_id, "contains a forgotten value (tombstone)")]
    assert retired([carrier, clean], {S_API}, forgetting(SECRET)) == expected
    assert retired([carrier, clean], {S_API}, forgetting(SECRET, API)) == expected
    assert retired([carrier, clean], {S_API}, forgetting(SECRET, WEB)) == []


def test_a_project_tombstone_does_not_retire_a_global_item() -> None:
    carrier = item("global carrier", scope=GLOBAL_SCOPE, evidence=[S_API, S_WEB], text=f"Deploy with {SECRET}")
    assert retired([carrier], {S_API, S_WEB}, forgetting(SECRET, API)) == []
    assert retired([carrier], {S_API, S_WEB}, forgetting(SECRET)) == [
        (carrier.item_id, "contains a forgotten value (tombstone)")
    ]


def test_gone_evidence_is_the_reason_given_when_both_apply() -> None:
    both = item("both", evidence=[uid("pruned")], text=SECRET)
    assert retired([both], set(), forgetting(SECRET)) == [
        (both.item_id, "all evidence is gone (deleted, pruned, polluted or withdrawn)")
    ]


def test_items_the_plan_already_retires_are_skipped() -> None:
    gone = item("gone", evidence=[uid("pruned")])
    carrier = item("carrier", evidence=[S_API], text=SECRET)
    assert retired([gone, carrier], {S_API}, forgetting(SECRET), touched={gone.item_id, carrier.item_id}) == []


# --- property: a tombstoned value never survives any plan --------------------------------

VALUE_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=6)
# Clean words hold a letter no value has, so they never spell (part of) the value.
CLEAN_WORD = st.sampled_from(["café", "über", "naïve", "résumé", "señor", "façade"])
SEPARATOR = st.text(alphabet=" -.,;:()!?/\n", min_size=1, max_size=2)
FIELDS = ("title", "text", "keywords", "task_group")


@st.composite
def spelled(draw: st.DrawFn, words: list[str]) -> str:
    """The value's words in any casing, fullwidth or not, with any punctuation between."""
    out = []
    for index, word in enumerate(words):
        if index:
            out.append(draw(SEPARATOR))
        for char in word:
            form = draw(st.integers(0, 2))
            out.append(char if form == 0 else char.upper() if form == 1 else chr(ord(char.upper()) + 0xFEE0))
    return "".join(out)


@st.composite
def fields(draw: st.DrawFn, words: list[str], carries: bool) -> dict[str, object]:
    """Title, text, keywords and task group of clean words; when ``carries``, one of them holds the value."""
    def clean() -> str:
        return " ".join(draw(st.lists(CLEAN_WORD, max_size=3)))

    keywords = tuple(draw(st.lists(CLEAN_WORD, max_size=2)))
    values: dict[str, object] = {"title": clean(), "text": clean(), "keywords": keywords, "task_group": clean()}
    if carries:
        where = draw(st.sampled_from(FIELDS))
        value = draw(spelled(words))
        if where == "keywords":
            values["keywords"] = (*keywords, value)
        else:
            values[where] = f"{clean()}{draw(SEPARATOR)}{value}{draw(SEPARATOR)}{clean()}"
    return values


def evidence_for(scope: str, draw: st.DrawFn) -> tuple[tuple[UUID, ...], dict[str, object]]:
    """Evidence that satisfies the scope rules (so a tombstone is the only thing to reject)."""
    if scope == API:
        return (S_API,), {}
    if scope == WEB:
        return (S_WEB,), {}
    return draw(
        st.sampled_from([((S_API, S_WEB), {}), ((S_WEB, NOTE), {}), ((S_API,), {"kind": ItemKindName.PREFERENCE})])
    )


SCOPE = st.sampled_from([API, WEB, GLOBAL_SCOPE])


@st.composite
def carrying_plans(draw: st.DrawFn) -> tuple[str, dict[str, ItemRow], list[bool], ConsolidationPlan, list[str]]:
    """A value, current items (some carrying it), and a plan whose adds and revises may carry it."""
    words = draw(st.lists(VALUE_WORD, min_size=1, max_size=3))
    handles: dict[str, ItemRow] = {}
    item_carries: list[bool] = []
    for index in range(draw(st.integers(1, 4))):
        carries = draw(st.booleans())
        scope = draw(SCOPE)
        evidence, _ = evidence_for(scope, draw)
        f = draw(fields(words, carries))
        sessions = [e for e in evidence if e != NOTE]
        handles[f"I{index + 1}"] = item(f"I{index + 1}", scope=scope, evidence=sessions, **f)  # type: ignore[arg-type]
        item_carries.append(carries)
    edits: list[Edit] = []
    effective: list[str] = []
    targets = draw(st.permutations(list(handles)))
    for index in range(draw(st.integers(1, 5))):
        carries = draw(st.booleans())
        f = draw(fields(words, carries))
        if index < len(targets) and draw(st.booleans()):
            scope = handles[targets[index]].scope  # a revise is judged in its target's scope
            evidence, extra = evidence_for(scope, draw)
            edit = Edit.model_validate(
                {"op": "revise", "target": targets[index], "scope": draw(SCOPE), "evidence": [str(e) for e in evidence], **f, **extra}
            )
        else:
            scope = draw(SCOPE)
            evidence, extra = evidence_for(scope, draw)
            edit = Edit.model_validate(
                {"op": "add", "scope": scope, "evidence": [str(e) for e in evidence], **f, **extra}
            )
        edits.append(edit)
        effective.append(scope if carries else "")
    return " ".join(words), handles, item_carries, plan(*edits), effective


@FAST
@given(case=carrying_plans(), data=st.data())
def test_a_tombstoned_value_never_survives_any_plan(case, data: st.DataObject) -> None:
    """Under a global tombstone, or one in each carrier's own project, every carrier is refused or retired."""
    value, handles, item_carries, proposed, effective = case
    items = list(handles.values())
    touched = frozenset(data.draw(st.sets(st.sampled_from([i.item_id for i in items]))))
    for place in (GLOBAL_SCOPE, API, WEB):
        forgotten = forgetting(value, place)
        found = check_plan(
            proposed, handles=handles, selected_scopes=SELECTED, note_scopes={NOTE: GLOBAL_SCOPE}, matcher=forgotten
        )
        assert [o.edit for o in found] == [
            describe_edit(e, i) for i, e in enumerate(proposed.edits) if effective[i] and reaches(place, effective[i])
        ]
        assert {o.reason for o in found} <= {"the edit contains a forgotten value (tombstone)"}

        retired = code_retirements(items, frozenset({S_API, S_WEB}), forgotten, touched)
        assert [o.item_id for o in retired] == [
            i.item_id
            for i, carries in zip(items, item_carries, strict=True)
            if carries and reaches(place, i.scope) and i.item_id not in touched
        ]


@FAST
@given(case=carrying_plans())
def test_a_tombstone_of_another_project_keeps_nothing_out(case) -> None:
    value, handles, _, proposed, _ = case
    elsewhere = forgetting(value, "git:example.com/acme/elsewhere")
    assert (
        check_plan(proposed, handles=handles, selected_scopes=SELECTED, note_scopes={NOTE: GLOBAL_SCOPE}, matcher=elsewhere)
        == []
    )
    assert code_retirements(list(handles.values()), frozenset({S_API, S_WEB}), elsewhere, frozenset()) == []


def test_screening_drops_what_cannot_apply_and_keeps_the_rest() -> None:
    good = add(S_API, scope=API)
    screened = screen_plan(
        plan(Edit(op="revise", target="I9", reason="r"), add(uid("not selected"), scope=API), good, add(scope=API)),
        handles=HANDLES, selected_scopes=SELECTED, note_scopes={}, matcher=matcher(),
    )
    assert screened.plan.edits == (good,) and screened.usable and not screened.refused
    assert [o.edit.split(":")[0] for o in screened.dropped] == ["edit 1", "edit 2", "edit 4"]
    assert screened.dropped[2].reason == "no evidence"


def test_screening_refuses_a_plan_with_what_must_never_pass() -> None:
    screened = screen_plan(
        plan(add(S_API, scope=API), add(S_API, scope=API, text=f"deploy with {SECRET}"), add(S_WEB, scope=API)),
        handles=HANDLES, selected_scopes=SELECTED, note_scopes={}, matcher=forgetting(SECRET),
    )
    assert screened.refused and not screened.usable
    assert [o.reason for o in screened.refusals] == [
        "the edit contains a forgotten value (tombstone)",
        f"scope {API} is not covered by its evidence (from {WEB})",
    ]
    assert "falcon" not in " ".join(o.reason + o.edit for o in screened.rejected)


def test_what_a_person_vouched_for_is_not_retired_because_its_sessions_left_the_window() -> None:
    from dataclasses import replace

    gone_by_age = uid("a session that left the retention window")
    kept = {
        "A": replace(item("A", evidence=[gone_by_age]), trust="accepted"),
        "E": replace(item("E", evidence=[gone_by_age]), edited_by_user=True),
        "C": replace(item("C", evidence=[gone_by_age]), use_count=2),
        "P": item("P", evidence=[gone_by_age]),  # proposed, never cited: age may retire it
        "S": replace(item("S", evidence=[S_API]), trust="accepted"),  # its session is selected: the model may retire it
    }
    retire = [Edit(op="retire", target=name, reason="all evidence sessions were removed") for name in kept]
    screened = screen_plan(plan(*retire), handles=kept, selected_scopes=SELECTED, note_scopes={}, matcher=matcher())
    assert [e.target for e in screened.plan.edits] == ["P", "S"]
    assert [o.reason for o in screened.dropped] == [
        "A was accepted by a person: kept when its sessions leave the retention window",
        "E was edited by a person: kept when its sessions leave the retention window",
        "C was cited by an agent: kept when its sessions leave the retention window",
    ]
