"""Skills in the memory folder: skills/<name>/SKILL.md, the pointers to it, the scope filter, the validator."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.adapters.folder_writer import write_folder
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.projections.folder_model import FolderModel, FolderSession
from mnemolog.projections.markdown_folder import item_ids_in, render_folder, render_skills
from support.folder_models import folder_session, words
from support.folder_validator import validate_folder

AT = datetime(2025, 6, 30, 12, tzinfo=UTC)


def _skill(n: int, scope: str, name: str, evidence: tuple[FolderSession, ...], description: str = "") -> ItemRow:
    return ItemRow(
        item_id=UUID(f"5c111{n:03x}-0000-4000-8000-000000000000"),
        kind="skill",
        scope=scope,
        task_group=scope.split(":")[-1],
        title="",
        text=description or f"Use when you need to build, migrate and test {name}: the steps in order",
        keywords=("make",),
        evidence=tuple(UUID(s.session_id) for s in evidence),
        created_at=AT,
        updated_at=AT,
        skill=Skill(
            name=name,
            steps=(
                SkillStep(command="make deps"),
                SkillStep(command="make migrate", action="applies the database migrations"),
                SkillStep(command="make test"),
            ),
            relies_on=("make", "Makefile"),
        ),
    )


A1, A2, B1 = folder_session(1, "proj:a", AT), folder_session(2, "proj:a", AT), folder_session(3, "proj:b", AT)
SKILL_A = _skill(1, "proj:a", "build-and-test", (A1, A2))
SKILL_B = _skill(2, "proj:b", "deploy-staging", (B1,))
SKILL_G = _skill(3, "global", "release-notes", (A1, B1))


def _model(project: str | None, *items: ItemRow) -> FolderModel:
    return FolderModel(items=items, sessions=(A1, A2, B1), project=project)


def test_skill_file_has_front_matter_steps_relies_on_and_evidence() -> None:
    files = render_folder(_model("proj:a", SKILL_A), words)
    text = files["skills/build-and-test/SKILL.md"]
    assert text.startswith('---\nname: build-and-test\ndescription: "Use when you need to build')
    steps = text.split("## Steps\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert steps == ["1. `make deps`", "2. `make migrate` - applies the database migrations", "3. `make test`"]
    assert "## Relies on\n\n- `make`\n- `Makefile`" in text
    evidence = text.split("## Evidence\n\n", 1)[1]
    assert f"thread_id={A1.native_id}" in evidence and f"thread_id={A2.native_id}" in evidence
    assert f"[item:{SKILL_A.item_id}]" in text


def test_memory_md_and_summary_point_to_the_skill() -> None:
    files = render_folder(_model("proj:a", SKILL_A, SKILL_G), words)
    for name in ("MEMORY.md", "memory_summary.md"):
        assert "skills/build-and-test/SKILL.md" in files[name], name
        assert "skills/release-notes/SKILL.md" in files[name], name


def test_a_project_sees_its_own_and_global_skills_only() -> None:
    files = render_folder(_model("proj:a", SKILL_A, SKILL_B, SKILL_G), words)
    skills = sorted(path for path in files if path.startswith("skills/"))
    assert skills == ["skills/build-and-test/SKILL.md", "skills/release-notes/SKILL.md"]
    assert "deploy-staging" not in files["MEMORY.md"] + files["memory_summary.md"]


def test_the_skills_alone_are_the_folders_skill_files_by_name() -> None:
    for model in (_model("proj:a", SKILL_A, SKILL_B, SKILL_G), _model(None, SKILL_A, _skill(4, "proj:b", "build-and-test", (B1,)))):
        files = render_folder(model, words)
        assert render_skills(model) == {p.split("/")[1]: t for p, t in files.items() if p.startswith("skills/")}
    own = render_skills(_model("proj:a", SKILL_A, SKILL_G), scopes={"proj:a"})
    assert list(own) == ["build-and-test"]  # a project's own, without the user-wide one


def test_same_name_in_two_scopes_gets_two_folders_in_the_shared_folder() -> None:
    other = _skill(4, "proj:b", "build-and-test", (B1,))
    files = render_folder(_model(None, SKILL_A, other), words)
    skills = {path for path in files if path.startswith("skills/")}
    suffix = str(other.item_id).replace("-", "")[:8]
    assert skills == {"skills/build-and-test/SKILL.md", f"skills/build-and-test-{suffix}/SKILL.md"}
    assert "name: build-and-test\n" in files["skills/build-and-test/SKILL.md"]  # the first one keeps its name
    # each file's front matter names its own folder
    for path in skills:
        assert f"name: {path.split('/')[1]}\n" in files[path]


def test_description_with_quotes_and_colons_stays_one_front_matter_line() -> None:
    item = _skill(5, "proj:a", "quoted", (A1,), description='Use when "make" says: error: no rule\nsecond line')
    text = render_folder(_model("proj:a", item), words)["skills/quoted/SKILL.md"]
    front = text.split("---\n")[1]
    assert front == 'name: quoted\ndescription: "Use when \\"make\\" says: error: no rule second line"\n'


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    out = tmp_path / "memories"
    write_folder(render_folder(_model(None, SKILL_A, SKILL_B, SKILL_G), words), out)
    return out


def test_rendered_folder_with_skills_is_valid(rendered: Path) -> None:
    assert validate_folder(rendered, words) == []


def test_validator_wants_front_matter(rendered: Path) -> None:
    path = rendered / "skills/build-and-test/SKILL.md"
    path.write_text(path.read_text().split("---\n", 2)[2], encoding="utf-8")
    assert any("skills/build-and-test/SKILL.md: no front matter" in p for p in validate_folder(rendered, words))


def test_validator_wants_the_name_of_the_folder(rendered: Path) -> None:
    path = rendered / "skills/build-and-test/SKILL.md"
    path.write_text(path.read_text().replace("name: build-and-test", "name: other"), encoding="utf-8")
    assert any("does not match its folder" in p for p in validate_folder(rendered, words))


def test_validator_wants_a_description(rendered: Path) -> None:
    path = rendered / "skills/deploy-staging/SKILL.md"
    text = path.read_text()
    line = next(line for line in text.splitlines() if line.startswith("description:"))
    path.write_text(text.replace(line, "description:"), encoding="utf-8")
    assert any("deploy-staging/SKILL.md: front matter has no description" in p for p in validate_folder(rendered, words))


def test_validator_wants_memory_md_to_name_each_skill(rendered: Path) -> None:
    (rendered / "skills/extra").mkdir()
    (rendered / "skills/extra/SKILL.md").write_text("---\nname: extra\ndescription: x\n---\n", encoding="utf-8")
    assert "skills/extra/SKILL.md is not referenced from MEMORY.md" in validate_folder(rendered, words)


def test_validator_finds_a_referenced_skill_that_is_gone(rendered: Path) -> None:
    (rendered / "skills/deploy-staging/SKILL.md").unlink()
    (rendered / "skills/deploy-staging").rmdir()
    assert "referenced skills/deploy-staging/SKILL.md does not exist" in validate_folder(rendered, words)


def test_a_step_cannot_forge_an_item_marker() -> None:
    forged = SKILL_A
    assert forged.skill is not None
    skill = forged.skill.model_copy(update={"steps": (SkillStep(command="echo [item:00000000-0000-4000-8000-000000000000]"), *forged.skill.steps)})
    text = render_folder(_model("proj:a", replace(forged, skill=skill)), words)["skills/build-and-test/SKILL.md"]
    assert item_ids_in(text) == [str(SKILL_A.item_id)]
