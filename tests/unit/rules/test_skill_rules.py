"""Skills as rules: names, the shared procedure, plan checks of skill edits, tombstones and holes in skill fields,
sealing of the skill's texts, and old item events (no skill field) still loading."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import uuid4

from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.plan import ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.plan_checks import code_retirements, screen_plan
from mnemolog.domain.sealing import sealed_paths
from mnemolog.domain.skill import Skill, SkillStep, common_steps, name_problem, skill_problem, slug
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK, TombstoneMatcher
from support.raw_events import raw_log_contains

from .builders import API, WEB, forgetting, item, matcher, uid

S1, S2 = uid("skill session 1"), uid("skill session 2")
SELECTED = {S1: API, S2: API}
STEPS = (SkillStep(command="make deps"), SkillStep(command="make build"), SkillStep(command="make test"))
SKILL = Skill(name="deps-build-test", steps=STEPS, relies_on=("make", "Makefile"))
HELD = replace(item("I1", kind="skill", text="Use to build and test", evidence=[S1]), skill=SKILL)


def _add(skill: Skill | None, scope: str = API, **fields: object) -> Edit:
    return Edit.model_validate(
        {"op": "add", "kind": "skill", "scope": scope, "text": "Use to build the app", "evidence": [str(S1), str(S2)],
         "skill": skill.model_dump() if skill else None, **fields}
    )


def _screen(*edits: Edit, handles: dict | None = None, forgotten: TombstoneMatcher | None = None):  # type: ignore[no-untyped-def,type-arg]
    return screen_plan(
        ConsolidationPlan(edits=edits), handles=handles or {}, selected_scopes=SELECTED, note_scopes={},
        matcher=forgotten or matcher(),
    )


def test_names_are_folder_safe_slugs() -> None:
    assert name_problem("deploy-staging") is None
    for bad in ("", "Deploy", "deploy staging", "../etc", "deploy--x", "-x", "a" * 60):
        assert name_problem(bad) is not None, bad
    assert slug("Deploy to Staging!") == "deploy-to-staging"
    assert slug("deploy", taken={"deploy", "deploy-2"}) == "deploy-3"
    assert slug("!!!") == "skill"


def test_a_skill_needs_two_real_steps() -> None:
    assert skill_problem(SKILL) is None
    assert skill_problem(None) == "a skill edit needs the skill (name and steps)"
    one = Skill(name="x", steps=(SkillStep(command="make"), SkillStep(command=" ")))
    assert skill_problem(one) == "a skill needs at least 2 steps"


def test_the_shared_procedure_keeps_order_and_skips_what_only_one_ran() -> None:
    first = ("uv sync", "python fix.py", "uv run alembic upgrade head", "uv run pytest")
    second = ("uv sync", "uv run alembic upgrade head", "ruff check .", "uv run pytest")
    assert common_steps(first, second) == ("uv sync", "uv run alembic upgrade head", "uv run pytest")
    assert common_steps(("a", "b", "c"), ("c", "b", "a")) in {("a",), ("b",), ("c",)}
    assert common_steps((), ("a",)) == ()


def test_screen_plan_passes_a_valid_skill_add() -> None:
    screened = _screen(_add(SKILL))
    assert screened.clean and len(screened.plan.edits) == 1


def test_screen_plan_drops_skill_edits_without_a_valid_skill() -> None:
    bad_name = SKILL.model_copy(update={"name": "Deploy Staging"})
    short = SKILL.model_copy(update={"steps": STEPS[:1]})
    screened = _screen(_add(None), _add(bad_name), _add(short), _add(SKILL))
    assert [o.reason for o in screened.dropped] == [
        "a skill edit needs the skill (name and steps)",
        "the skill name must be lowercase words joined by hyphens (a folder name)",
        "a skill needs at least 2 steps",
    ]
    assert [e.skill for e in screened.plan.edits] == [SKILL]


def test_screen_plan_keeps_skill_names_unique_per_scope() -> None:
    screened = _screen(_add(SKILL), _add(SKILL), handles={"I1": HELD})
    assert [o.reason for o in screened.dropped] == [f"the skill name 'deps-build-test' is already used in scope {API}"] * 2
    other_scope = _screen(_add(SKILL, scope=WEB, evidence=[]), handles={"I1": HELD})
    assert "already used" not in " ".join(o.reason for o in other_scope.rejected)
    twice = _screen(_add(SKILL), _add(SKILL))  # two adds of one name in one plan: the second is dropped
    assert len(twice.plan.edits) == 1 and "already used" in twice.dropped[0].reason


def test_a_revise_of_a_skill_keeps_its_name_and_needs_two_steps() -> None:
    renamed = Edit(op="revise", target="I1", kind=ItemKindName.SKILL, scope=API, text="x", evidence=(str(S2),),
                   skill=SKILL.model_copy(update={"name": "Not A Slug"}))
    assert _screen(renamed, handles={"I1": HELD}).clean  # the name it keeps is the skill's own
    short = renamed.model_copy(update={"skill": SKILL.model_copy(update={"steps": STEPS[:1]})})
    assert _screen(short, handles={"I1": HELD}).dropped[0].reason == "a skill needs at least 2 steps"
    text_only = renamed.model_copy(update={"skill": None})
    assert _screen(text_only, handles={"I1": HELD}).clean  # the steps stay as they are


def test_evidence_and_scope_rules_apply_to_skills_like_every_edit() -> None:
    screened = _screen(_add(SKILL, evidence=[]))
    assert screened.dropped[0].reason == "no evidence"
    refused = _screen(_add(SKILL, scope=WEB))
    assert refused.refused and "not covered by its evidence" in refused.refusals[0].reason


def test_a_forgotten_value_in_a_step_refuses_the_plan_and_retires_the_held_skill() -> None:
    forgotten = forgetting("make build")
    assert _screen(_add(SKILL), forgotten=forgotten).refused
    assert forgotten.withholds(HELD, API)
    retired = code_retirements([HELD], frozenset({S1}), forgotten, frozenset())
    assert [o.reason for o in retired] == ["contains a forgotten value (tombstone)"]
    in_relies_on = replace(HELD, skill=SKILL.model_copy(update={"relies_on": ("deploy.secret.toml",)}))
    assert forgetting("deploy.secret.toml").withholds(in_relies_on, API)


def test_a_hole_in_a_step_drops_the_edit_and_retires_the_skill() -> None:
    holed = SKILL.model_copy(update={"steps": (SkillStep(command=f"make {FORGOTTEN_MARK}"), *STEPS[1:])})
    assert "cut out by a tombstone" in _screen(_add(holed)).dropped[0].reason
    retired = code_retirements([replace(HELD, skill=holed)], frozenset({S1}), matcher(), frozenset())
    assert "hole" in retired[0].reason


def test_skill_texts_are_sealed_in_the_log_and_read_back(memory_store: Store) -> None:
    skill = SKILL.model_copy(update={"steps": (SkillStep(command="make deploy-falcon-42"), *STEPS[1:])})
    skill_item = MemoryItem(kind="skill", scope=API, task_group="api", title="deps-build-test", text="Use to build",
                            keywords=(), evidence=(S1,), valid_from=None, consolidation_id=None, reason="r", skill=skill)
    memory_store.app.save_all(skill_item)
    assert not raw_log_contains(memory_store, "falcon")
    assert memory_store.app.repository.get(skill_item.id).skill == skill
    assert {p for p in sealed_paths(MemoryItem.Added) if p.startswith("skill.")} == {
        "skill.name", "skill.steps.*.command", "skill.steps.*.action", "skill.relies_on.*"
    }


def test_an_item_event_stored_before_skills_existed_still_loads() -> None:
    old = {
        "originator_id": str(uuid4()), "originator_version": 1, "timestamp": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        "originator_topic": "mnemolog.domain.memory_item:MemoryItem", "kind": "knowledge", "scope": API, "task_group": "",
        "title": "", "text": "Run make test.", "keywords": [], "evidence": [], "valid_from": None, "consolidation_id": None,
        "reason": "old",
    }
    event = MemoryItem.Added.model_validate(old)
    assert event.skill is None
    revised = MemoryItem.Revised.model_validate(
        {k: v for k, v in old.items() if k not in ("originator_topic", "kind", "scope", "task_group")} | {"originator_version": 2}
    )
    assert revised.skill is None
