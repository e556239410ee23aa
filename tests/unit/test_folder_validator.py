"""validate_folder: a valid folder passes; each broken Codex rule is reported."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.folder_validator import validate_folder

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "folder_basic"


def words(text: str) -> int:
    """Token counter for tests: whitespace-separated words."""
    return len(text.split())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    target = tmp_path / "memories"
    shutil.copytree(GOLDEN, target)
    return target


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _problems(folder: Path) -> str:
    return "\n".join(validate_folder(folder, words))


def test_valid_folder_passes(folder: Path) -> None:
    assert validate_folder(folder, words) == []


def test_not_a_directory(tmp_path: Path) -> None:
    assert validate_folder(tmp_path / "missing", words) != []


def test_first_line_must_be_v1(folder: Path) -> None:
    _edit(folder / "memory_summary.md", "v1\n", "v2\n")
    assert "first line must be exactly 'v1'" in _problems(folder)


def test_missing_section(folder: Path) -> None:
    _edit(folder / "memory_summary.md", "## General Tips\n", "## Tips\n")
    assert "'## General Tips' must appear exactly once" in _problems(folder)


def test_sections_out_of_order(folder: Path) -> None:
    path = folder / "memory_summary.md"
    text = path.read_text()
    text = text.replace("## User preferences", "## TMP").replace(
        "## General Tips", "## User preferences"
    )
    path.write_text(text.replace("## TMP", "## General Tips"))
    assert "out of order" in _problems(folder)


def test_task_group_missing_from_whats_in_memory(folder: Path) -> None:
    _edit(folder / "MEMORY.md", "# Task Group: terraform", "# Task Group: kubernetes")
    assert "task group 'kubernetes' is not in What's in Memory" in _problems(folder)


@pytest.mark.parametrize("bullet", ["* ", "+ ", "  * "])
def test_non_dash_bullets(folder: Path, bullet: str) -> None:
    _edit(folder / "MEMORY.md", "- terraform, lock", f"{bullet}terraform, lock")
    assert "bullets must use '-'" in _problems(folder)


def test_numbered_list_in_bullet_section(folder: Path) -> None:
    _edit(folder / "memory_summary.md", "- Answer briefly", "1. Answer briefly")
    assert "numbered list in a bullet section" in _problems(folder)


def test_bold(folder: Path) -> None:
    _edit(folder / "memory_summary.md", "Answer briefly", "Answer **briefly**")
    assert "bold" in _problems(folder)


def test_task_without_rollout_files_or_keywords(folder: Path) -> None:
    _edit(folder / "MEMORY.md", "### keywords\n- terraform, lock\n", "")
    problems = _problems(folder)
    assert "'## Task 1: Clear a stale terraform lock" in problems
    assert "has no '### keywords'" in problems
    _edit(
        folder / "MEMORY.md",
        "### rollout_summary_files\n- rollout_summaries/2025-02-10",
        "- x/2025-02-10",
    )
    assert "has no '### rollout_summary_files'" in _problems(folder)


def test_referenced_rollout_summary_missing(folder: Path) -> None:
    (folder / "rollout_summaries" / "2025-02-01T09-00-00-vAXV.md").unlink()
    assert "rollout_summaries/2025-02-01T09-00-00-vAXV.md does not exist" in _problems(folder)


def test_raw_memories_header(folder: Path) -> None:
    _edit(folder / "raw_memories.md", "# Raw Memories", "# Memories")
    assert "raw_memories.md: the first line must be '# Raw Memories'" in _problems(folder)
    _edit(folder / "raw_memories.md", "Merged stage-1", "Merged")
    assert "neither" in _problems(folder)


def test_missing_files(folder: Path) -> None:
    (folder / "MEMORY.md").unlink()
    (folder / "raw_memories.md").unlink()
    problems = _problems(folder)
    assert "MEMORY.md is missing" in problems
    assert "raw_memories.md is missing" in problems


def test_summary_over_budget(folder: Path) -> None:
    _edit(folder / "memory_summary.md", "## User Profile\n", "## User Profile\n" + "word " * 2600)
    assert "over the 2500 budget" in _problems(folder)
