"""Notes as evidence in the plan checks: which notes an edit may cite, and what keeps an item alive."""

from __future__ import annotations

from uuid import UUID, uuid5

from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit
from mnemolog.domain.plan_checks import code_retirements, screen_plan
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone_matcher import TombstoneMatcher

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"
BASE = UUID("00000000-0000-4000-8000-000000000000")
NO_TOMBSTONES = TombstoneMatcher(b"key", [])


def uid(name: str) -> UUID:
    return uuid5(BASE, name)


S_API, S_OLD = uid("api session"), uid("an older api session, not selected")
API_NOTE, GLOBAL_NOTE = uid("api note"), uid("global note")
NOTES = {API_NOTE: API, GLOBAL_NOTE: GLOBAL_SCOPE}
I1 = ItemRow(uid("I1"), "knowledge", API, "api", "", "Run make test.", (), (S_OLD,))
HANDLES = {"I1": I1}


def problems(*edits: Edit) -> list[str]:
    screened = screen_plan(
        ConsolidationPlan(edits=edits), handles=HANDLES, selected_scopes={S_API: API}, note_scopes=NOTES, matcher=NO_TOMBSTONES
    )
    return [o.reason for o in screened.rejected]


def add(*evidence: UUID, scope: str, kind: str = "knowledge") -> Edit:
    return Edit(op="add", kind=kind, scope=scope, text="Use pnpm.", evidence=tuple(str(e) for e in evidence), reason="r")


def test_a_note_is_evidence_for_an_item_of_its_own_scope() -> None:
    assert problems(add(API_NOTE, scope=API)) == []
    assert problems(add(GLOBAL_NOTE, scope=GLOBAL_SCOPE)) == []
    assert problems(add(GLOBAL_NOTE, S_API, scope=GLOBAL_SCOPE)) == []


def test_a_note_of_another_scope_is_no_evidence() -> None:
    assert problems(add(API_NOTE, scope=GLOBAL_SCOPE)) == [
        f"notes of another scope are no evidence for an item of scope global: {API_NOTE}"
    ]
    assert problems(add(GLOBAL_NOTE, scope=API)) == [
        f"notes of another scope are no evidence for an item of scope {API}: {GLOBAL_NOTE}"
    ]
    assert problems(add(API_NOTE, scope=WEB)) != []


def test_a_note_that_is_not_pending_is_unknown_evidence() -> None:
    applied = uid("an applied or withdrawn note")
    assert problems(add(applied, scope=API)) == [f"evidence names sessions that were not selected: {applied}"]


def test_a_revise_may_keep_the_evidence_its_item_has() -> None:
    correction = Edit(
        op="revise", target="I1", kind="knowledge", scope=API, text="Run make check.",
        evidence=(str(API_NOTE), str(S_OLD)), reason="user correction",
    )
    assert problems(correction) == []
    assert problems(correction.model_copy(update={"evidence": (str(S_OLD),)})) == []
    # an add may not: S_OLD was not selected
    assert problems(add(S_OLD, scope=API)) == [f"evidence names sessions that were not selected: {S_OLD}"]


def retired(item: ItemRow, live: set[UUID]) -> list[UUID | None]:
    return [o.item_id for o in code_retirements([item], frozenset(live), NO_TOMBSTONES, frozenset())]


def test_an_item_resting_on_a_note_stays_while_the_note_stands_and_goes_when_it_is_withdrawn() -> None:
    noted = ItemRow(uid("noted"), "preference", GLOBAL_SCOPE, "", "", "Answer briefly.", (), (GLOBAL_NOTE,))
    mixed = ItemRow(uid("mixed"), "knowledge", API, "api", "", "Run make check.", (), (API_NOTE, S_OLD))

    assert retired(noted, {GLOBAL_NOTE}) == []
    assert retired(noted, set()) == [noted.item_id]  # the note was withdrawn
    assert retired(mixed, {API_NOTE}) == []  # its session is gone, the note stands
    assert retired(mixed, {S_OLD}) == []  # the note was withdrawn, the session stands
    assert retired(mixed, set()) == [mixed.item_id]
