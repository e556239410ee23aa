"""The offline skill rule: procedures from phase 1, and the skills phase 2 creates, revises and invalidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator, parse_raw_memory
from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.adapters.heuristic_skills import ProcedureStep, parse_procedure
from mnemolog.adapters.session_files import read_session
from mnemolog.domain.plan import Edit, ItemKindName
from mnemolog.domain.ports import ConsolidationRequest, InputForModel, ItemForModel, NoteForModel
from mnemolog.domain.skill import Skill, SkillStep
from support.agent_sessions import ClaudeSession, CodexRollout

API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"
DAY = datetime(2026, 11, 2, 9, tzinfo=UTC)
OK = ("uv sync", "uv run alembic upgrade head", "uv run pytest -q")


def _raw(*steps: str, task: str = "add a column") -> str:
    lines = "\n".join(f"- {s}" for s in steps)
    return f"---\ntask: {task}\ntask_group: api\n---\n\n### Task 1: {task}\n\nProcedure:\n{lines}\n\nReferences:\n- x\n"


def _ok(*commands: str) -> list[str]:
    return [f"`{c}` -> ok" for c in commands]


def _input(n: int, *steps: str, scope: str = API, change: str = "added", day: int = 0) -> InputForModel:
    return InputForModel(
        session_id=f"5e550000-0000-4000-8000-{n:012d}", scope=scope, cwd="/src/api", updated_at=DAY + timedelta(days=day),
        rollout_summary=f"session {n}", raw_memory=_raw(*steps), change=change,
    )


def _skill_item(commands: tuple[str, ...] = OK, evidence: tuple[str, ...] = ()) -> ItemForModel:
    skill = Skill(name="sync-alembic-pytest", steps=tuple(SkillStep(command=c) for c in commands), relies_on=("uv",))
    return ItemForModel("I1", "skill", API, "api", "sync-alembic-pytest", "Use when working in api", ("uv",), evidence, skill)


def _plan(*inputs: InputForModel, items: tuple[ItemForModel, ...] = (), notes: tuple[NoteForModel, ...] = ()) -> list[Edit]:
    request = ConsolidationRequest(items=items, inputs=inputs, removed_sessions=(), notes=notes)
    return [e for e in HeuristicConsolidator().consolidate(request).plan.edits if e.kind == ItemKindName.SKILL]


# ------------------------------------------------------------------ phase 1: the procedure


def test_phase_one_records_the_procedure_of_a_codex_and_a_claude_code_session(tmp_path: Path) -> None:
    codex = (
        CodexRollout(1, DAY, "/home/dev/api", "git@github.com:acme/api.git")
        .user("Add the invoice column.")
        .shell("ls", "Makefile\n")
        .shell("cd /home/dev/api && uv sync 2>&1 | tail -5", "Resolved 41 packages")
        .shell("uv run alembic upgrade head", "Running upgrade")
        .shell("uv run pytest -q /home/dev/api/tests", "24 passed")
        .shell("git commit -am 'invoice column'", "[main 1a2b3c] invoice column")
        .say("Done.")
        .write(tmp_path)
    )
    claude = (
        ClaudeSession(2, DAY, "/home/dev/api")
        .user("Add a refund column.")
        .bash("uv sync", "Resolved 41 packages")
        .bash("make migrate", "make: *** No rule to make target 'migrate'.  Stop.", code=2)
        .bash("uv run alembic upgrade head", "Running upgrade")
        .say("Done.")
        .write(tmp_path)
    )
    first = parse_procedure(HeuristicExtractor().extract(read_session(codex)).output.raw_memory)
    assert first == tuple(ProcedureStep(c, True) for c in ("uv sync", "uv run alembic upgrade head", "uv run pytest -q tests"))
    second = parse_procedure(HeuristicExtractor().extract(read_session(claude)).output.raw_memory)
    assert second == (
        ProcedureStep("uv sync", True),
        ProcedureStep("make migrate", False, "exit 2: make: *** No rule to make target 'migrate'. Stop."),
        ProcedureStep("uv run alembic upgrade head", True),
    )


def test_procedure_lines_are_not_mistaken_for_failure_items() -> None:
    raw = _raw(*_ok("uv sync"), "`make migrate` -> failed (exit 2: No rule)") .replace(
        "Procedure:", "Failures and how to do differently:\n- `make x` failed -> `make y` worked\n\nProcedure:"
    )
    parsed = parse_raw_memory(raw)
    assert [text for _, text in parsed.bullets] == ["`make x` failed -> `make y` worked"]
    assert len(parse_procedure(raw)) == 2


# ------------------------------------------------------------------ phase 2: create


def test_the_same_three_steps_in_two_sessions_of_a_project_make_one_skill() -> None:
    one = _input(1, "`ls` -> ok", *_ok(OK[0], "python scripts/seed.py", *OK[1:]))
    two = _input(2, *_ok(*OK), "`ruff check .` -> ok", day=1)
    [edit] = _plan(one, two)
    assert edit.op == "add" and edit.scope == API and edit.skill is not None
    assert edit.skill.commands == OK
    assert edit.skill.name == "sync-alembic-pytest" and edit.title == edit.skill.name
    assert set(edit.evidence) == {one.session_id, two.session_id}
    assert "uv" in edit.skill.relies_on and edit.text.startswith("Use when working in api")


def test_no_skill_from_two_steps_one_session_two_projects_or_only_old_sessions() -> None:
    assert _plan(_input(1, *_ok(*OK[:2])), _input(2, *_ok(*OK[:2]))) == []
    assert _plan(_input(1, *_ok(*OK))) == []
    assert _plan(_input(1, *_ok(*OK)), _input(2, *_ok(*OK), scope=WEB)) == []
    assert _plan(_input(1, *_ok(*OK), change="unchanged"), _input(2, *_ok(*OK), change="unchanged")) == []


def test_a_failed_step_is_not_part_of_a_procedure_that_succeeded() -> None:
    failed = ("`uv sync` -> ok", "`uv run alembic upgrade head` -> failed (exit 1: boom)", "`uv run pytest -q` -> ok")
    assert _plan(_input(1, *_ok(*OK)), _input(2, *failed)) == []


def test_a_procedure_a_skill_already_holds_is_not_added_again() -> None:
    held = _skill_item(evidence=("5e550000-0000-4000-8000-000000000001",))
    edits = _plan(_input(1, *_ok(*OK), change="unchanged"), _input(2, *_ok(*OK), day=1), items=(held,))
    assert [(e.op, e.target) for e in edits] == [("revise", "I1")]  # the new session joins its evidence
    assert "ran the steps successfully again" in edits[0].reason


def test_a_note_that_asks_for_a_skill_makes_one_with_the_note_as_evidence() -> None:
    note = NoteForModel("401e0000-0000-4000-8000-000000000001", "remember", API,
                        "Skill deploy-staging: run `make build`, then `make push ENV=staging`, then `make smoke`.")
    [edit] = _plan(notes=(note,))
    assert edit.skill is not None and edit.skill.name == "deploy-staging"
    assert edit.skill.commands == ("make build", "make push ENV=staging", "make smoke")
    assert edit.evidence == (note.note_id,) and edit.scope == API
    request = ConsolidationRequest(items=(), inputs=(), removed_sessions=(), notes=(note,))
    assert len(HeuristicConsolidator().consolidate(request).plan.edits) == 1  # not also a preference


# ------------------------------------------------------------------ phase 2: revise and invalidate

EVIDENCE = ("5e550000-0000-4000-8000-000000000001", "5e550000-0000-4000-8000-000000000002")


def _held_inputs() -> tuple[InputForModel, InputForModel]:
    return _input(1, *_ok(*OK), change="unchanged"), _input(2, *_ok(*OK), change="unchanged", day=1)


def test_a_later_session_that_replaced_a_failing_step_revises_the_skill() -> None:
    later = _input(3, "`uv sync` -> ok", "`uv run alembic upgrade head` -> failed (exit 1: FileNotFoundError: alembic.ini)",
                   "`uv run python -m app.migrate` -> ok", "`uv run pytest -q` -> ok", day=5)
    [edit] = _plan(*_held_inputs(), later, items=(_skill_item(evidence=EVIDENCE),))
    assert edit.op == "revise" and edit.target == "I1" and edit.skill is not None
    assert edit.skill.commands == ("uv sync", "uv run python -m app.migrate", "uv run pytest -q")
    assert edit.skill.name == "sync-alembic-pytest"
    assert set(edit.evidence) == {*EVIDENCE, later.session_id}
    assert "`uv run alembic upgrade head` failed and `uv run python -m app.migrate` worked in its place" in edit.reason


def test_a_step_that_is_gone_with_nothing_in_its_place_invalidates_the_skill() -> None:
    later = _input(3, "`uv sync` -> ok", "`uv run alembic upgrade head` -> failed (exit 2: error: Failed to spawn: `alembic` not found)", day=5)
    [edit] = _plan(*_held_inputs(), later, items=(_skill_item(evidence=EVIDENCE),))
    assert edit.op == "invalidate" and edit.target == "I1"
    assert edit.evidence == (later.session_id,) and "nothing worked in its place" in edit.reason
    assert edit.valid_from == later.updated_at


def test_failing_tests_fixed_in_the_code_change_nothing() -> None:
    rerun = _input(3, "`uv sync` -> ok", "`uv run alembic upgrade head` -> ok", "`uv run pytest -q` -> failed (exit 1: 2 failed)",
                   "`uv run pytest -q` -> ok", day=5)
    failing = _input(4, "`uv sync` -> ok", "`uv run alembic upgrade head` -> ok", "`uv run pytest -q` -> failed (exit 1: 1 failed)", day=6)
    edits = _plan(*_held_inputs(), rerun, failing, items=(_skill_item(evidence=EVIDENCE),))
    assert [(e.op, set(e.evidence)) for e in edits] == [("revise", {*EVIDENCE, rerun.session_id})]  # it held in the rerun
    assert edits[0].skill is not None and edits[0].skill.commands == OK


def test_an_older_session_says_nothing_about_a_skill_learnt_after_it() -> None:
    older = _input(3, "`uv sync` -> ok", "`uv run alembic upgrade head` -> failed (exit 127: command not found)", day=-5)
    assert _plan(*_held_inputs(), older, items=(_skill_item(evidence=EVIDENCE),)) == []


def test_sessions_arriving_together_make_the_skill_as_it_works_now() -> None:
    one, two = _input(1, *_ok(*OK)), _input(2, *_ok(*OK), day=1)
    later = _input(3, "`uv sync` -> ok", "`uv run alembic upgrade head` -> failed (exit 1: moved)",
                   "`uv run python -m app.migrate` -> ok", "`uv run pytest -q` -> ok", day=2)
    [edit] = _plan(one, two, later)
    assert edit.op == "add" and edit.skill is not None
    assert edit.skill.commands == ("uv sync", "uv run python -m app.migrate", "uv run pytest -q")
    assert set(edit.evidence) == {one.session_id, two.session_id, later.session_id}
