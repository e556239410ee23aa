"""Skills through the model path on both backends: a checked plan adds and revises a skill, the views
carry it, the folder renders it for its project only, a rebuild gives the same rows, forget retires it."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.plan import ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.services.erase import erase_value
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.skill import Skill, SkillStep
from support.consolidating import rendered, run_consolidation
from support.memory import extracted_session
from support.postgres import find_postgres_bindir
from support.scripted_models import ScriptedConsolidator, handle_for

API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"
STEPS = (SkillStep(command="uv sync"), SkillStep(command="uv run alembic upgrade head"), SkillStep(command="uv run pytest -q"))


def _skill_edit(evidence: tuple[str, ...], name: str = "migrate-and-test", steps: tuple[SkillStep, ...] = STEPS) -> Edit:
    return Edit(
        op="add",
        kind=ItemKindName.SKILL,
        scope=API,
        task_group="api",
        text="Use before a pull request that touches the models: sync, migrate, then test",
        keywords=("uv", "alembic"),
        evidence=evidence,
        reason="the same procedure succeeded in two sessions",
        skill=Skill(name=name, steps=steps, relies_on=("uv", "alembic.ini")),
    )


def _two_sessions(store) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    one = extracted_session(store, "0197a000-0000-7000-8000-000000000001", API, "migrated and tested", updated_at=datetime(2026, 10, 20, tzinfo=UTC))
    two = extracted_session(store, "0197a000-0000-7000-8000-000000000002", API, "migrated again", updated_at=datetime(2026, 10, 21, tzinfo=UTC))
    return str(one), str(two)


def test_a_planned_skill_is_stored_viewed_rendered_and_rebuilt(store_factory) -> None:  # type: ignore[no-untyped-def]
    store = store_factory()
    one, two = _two_sessions(store)
    report = run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(_skill_edit((one, two)),))))
    assert report.status == "completed" and report.added == 1
    [row] = [i for i in store.reads().active_items() if i.kind == "skill"]
    assert row.skill is not None and row.skill.commands == ("uv sync", "uv run alembic upgrade head", "uv run pytest -q")
    assert {str(e) for e in row.evidence} == {one, two}
    files = rendered(store, API)
    assert "1. `uv sync`\n2. `uv run alembic upgrade head`\n3. `uv run pytest -q`" in files["skills/migrate-and-test/SKILL.md"]
    assert not any(path.startswith("skills/") for path in rendered(store, WEB))
    hits = store.reads().search("alembic", API, None, 5)
    assert [h.item.item_id for h in hits] == [row.item_id]
    before = store.reads().item(row.item_id, API)
    store.rebuild()
    assert store.reads().item(row.item_id, API) == before


def test_a_plan_revises_the_steps_and_the_log_keeps_both(store_factory) -> None:  # type: ignore[no-untyped-def]
    store = store_factory()
    one, two = _two_sessions(store)
    run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(_skill_edit((one, two)),))))
    three = str(extracted_session(store, "0197a000-0000-7000-8000-000000000003", API, "migrate moved", updated_at=datetime(2026, 10, 22, tzinfo=UTC)))
    steps = (STEPS[0], SkillStep(command="uv run python -m app.migrate"), STEPS[2])

    def revise(request):  # type: ignore[no-untyped-def]
        handle = handle_for(request, lambda item: item.kind == "skill")
        skill = Skill(name="migrate-and-test", steps=steps, relies_on=("uv",))
        edit = _skill_edit((one, two, three)).model_copy(update={"op": "revise", "target": handle, "skill": skill})
        return ConsolidationPlan(edits=(edit,))

    report = run_consolidation(store, ScriptedConsolidator(revise))
    assert report.revised == 1, report.as_dict()
    [row] = [i for i in store.reads().active_items() if i.kind == "skill"]
    assert row.skill is not None and row.skill.commands[1] == "uv run python -m app.migrate"
    item = store.app.repository.get(row.item_id)
    assert isinstance(item, MemoryItem) and item.skill.commands[1] == "uv run python -m app.migrate"
    revised = [e for e in store.app.repository.event_store.get(row.item_id) if isinstance(e, MemoryItem.Revised)]
    assert revised and revised[-1].skill is not None


def test_forget_of_a_step_retires_the_skill_and_its_folder(store_factory) -> None:  # type: ignore[no-untyped-def]
    store = store_factory()
    one, two = _two_sessions(store)
    run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(_skill_edit((one, two)),))))
    assert "skills/migrate-and-test/SKILL.md" in rendered(store, API)
    report = forget_value(store, "alembic upgrade head", "global", "a stale command")
    assert len(report.retired) == 1
    assert not [i for i in store.reads().active_items() if i.kind == "skill"]
    files = rendered(store, API)
    assert not any(path.startswith("skills/") for path in files)
    assert "migrate-and-test" not in files["MEMORY.md"]


def _store_bytes(store, database_url: str | None) -> bytes:  # type: ignore[no-untyped-def]
    """Every byte the store keeps: the SQLite home's files, or a pg_dump of the PostgreSQL database."""
    if database_url is None:
        return b"".join(p.read_bytes() for p in sorted(Path(store.location).rglob("*")) if p.is_file())
    bindir = find_postgres_bindir()
    pg_dump = str(bindir / "pg_dump") if bindir else shutil.which("pg_dump")
    assert pg_dump, "pg_dump is needed to scan a PostgreSQL store"
    return subprocess.run([pg_dump, "--dbname", database_url], capture_output=True, check=True, timeout=120).stdout


def test_erase_of_a_value_in_a_step_leaves_it_in_no_byte_of_the_store(store_factory, database_url) -> None:  # type: ignore[no-untyped-def]
    store = store_factory()
    one, two = _two_sessions(store)
    steps = (STEPS[0], SkillStep(command="uv run deploy --token-file falcon-7731.key"), STEPS[2])
    run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(_skill_edit((one, two), steps=steps),))))
    [row] = [i for i in store.reads().active_items() if i.kind == "skill"]
    assert b"falcon-7731" in _store_bytes(store, database_url)  # the views hold the steps (the log holds them sealed)
    report = erase_value(store, "falcon-7731", store.keys, store)
    assert report.erased.get("item", 0) >= 1
    assert b"falcon" not in _store_bytes(store, database_url)
    item = store.app.repository.get(row.item_id)
    assert not item.is_active
    assert "falcon" not in " ".join(s.command for s in item.skill.steps)
