"""Codex's `applies_to: cwd=...` lines name the project's working folder wherever one is known (issue 30, wording).

MEMORY.md, memory_summary.md and a skill's SKILL.md say the same for one project: the working folders of its
items' evidence, else of the project's sessions in the folder; "unknown" only when no folder is known, and
never an empty `cwd=`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import UUID

from mnemolog.domain.reads import ItemRow
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.projections.folder_model import FolderModel
from mnemolog.projections.markdown_folder import render_folder
from support.folder_models import folder_session, words

AT = datetime(2025, 6, 30, 12, tzinfo=UTC)
SESSION = folder_session(1, "proj:a", AT)  # cwd /src/a
NO_CWD = replace(folder_session(2, "proj:a", AT), cwd="")


def _item(n: int, kind: str, evidence: tuple[str, ...], skill: Skill | None = None) -> ItemRow:
    return ItemRow(
        item_id=UUID(f"00000000-0000-4000-8000-{n:012d}"),
        kind=kind,
        scope="proj:a",
        task_group="builds",
        title=f"Item {n}",
        text="Run make test before pushing.",
        keywords=("make",),
        evidence=tuple(UUID(s) for s in evidence),
        created_at=AT,
        updated_at=AT,
        skill=skill,
    )


SKILL = Skill(name="build-and-test", steps=(SkillStep(command="make test"),), relies_on=("make",))


def applies_to(files: dict[str, str]) -> dict[str, list[str]]:
    return {name: [line for line in text.splitlines() if "applies_to:" in line] for name, text in files.items() if "applies_to:" in text}


def test_evidence_without_a_cwd_falls_back_to_the_projects_sessions_in_every_file() -> None:
    items = (_item(1, "preference", (NO_CWD.session_id,)), _item(2, "skill", (), SKILL))
    files = render_folder(FolderModel(items=items, sessions=(SESSION, NO_CWD), project="proj:a"), words)
    found = applies_to(files)
    assert set(found) == {"MEMORY.md", "memory_summary.md", "skills/build-and-test/SKILL.md"}
    for name, lines in found.items():
        assert lines and all("cwd=/src/a;" in line for line in lines), (name, lines)


def test_unknown_only_when_no_folder_is_known() -> None:
    items = (_item(1, "preference", (NO_CWD.session_id,)),)
    files = render_folder(FolderModel(items=items, sessions=(NO_CWD,), project="proj:a"), words)
    lines = [line for found in applies_to(files).values() for line in found]
    assert lines and all("cwd=unknown;" in line for line in lines), lines
