"""Check a memory folder against Codex's structural rules (see ``reference/codex-formats.md``).

``validate_folder`` returns a list of problems, one sentence each; an empty list
means the folder is valid. It reads files only; it never follows the rules'
spirit beyond what can be checked mechanically.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from mnemolog.projections.markdown_folder import SKILL_FILE, SKILLS_DIR, code_span_flags

SUMMARY_FILE = "memory_summary.md"
MEMORY_FILE = "MEMORY.md"
RAW_MEMORIES_FILE = "raw_memories.md"
ROLLOUT_DIR = "rollout_summaries"
SUMMARY_TOKEN_BUDGET = 2500
SUMMARY_SECTIONS = ("User Profile", "User preferences", "General Tips", "What's in Memory")
RAW_HEADER = "# Raw Memories"
RAW_MERGED = "Merged stage-1 raw memories (stable ascending thread-id order):"
RAW_EMPTY = "No raw memories yet."

_OTHER_BULLET = re.compile(r"^\s*[*+]\s")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s")
_ROLLOUT_REF = re.compile(r"rollout_summaries/([^\s()]+\.md)")
_SKILL_REF = re.compile(r"\bskills/([^\s()/]+)/SKILL\.md")
_SKILL_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _read(path: Path, problems: list[str]) -> str | None:
    if path.is_symlink() or not path.is_file():
        problems.append(f"{path.name} is missing (or not a regular file)")
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(f"{path.name} cannot be read as UTF-8: {error}")
        return None


def _sections(text: str, prefix: str) -> list[tuple[str, list[str]]]:
    """(heading, body lines) for each heading that starts with exactly ``prefix``."""
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(prefix) and not line.startswith(prefix + "#"):
            found.append((line[len(prefix) :].strip(), []))
        elif found:
            found[-1][1].append(line)
    return found


def _style_problems(name: str, text: str, *, bullet_sections: bool) -> list[str]:
    """``-`` bullets only, no bold; numbered lists only outside bullet sections."""
    problems = []
    section = ""
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("## "):
            section = line[3:].strip()
        if _OTHER_BULLET.match(line):
            problems.append(f"{name}:{number}: bullets must use '-', not '*' or '+'")
        if bullet_sections and section != "User Profile" and _NUMBERED.match(line):
            problems.append(f"{name}:{number}: numbered list in a bullet section")
        if "**" in "".join(part for part, code in code_span_flags(line) if not code):
            problems.append(f"{name}:{number}: bold text ('**') is not allowed")
    return problems


def _check_summary(text: str, count_tokens: Callable[[str], int]) -> tuple[list[str], str]:
    """Problems of memory_summary.md, and the body of its What's in Memory section."""
    problems: list[str] = []
    if text.split("\n", 1)[0] != "v1":
        problems.append(f"{SUMMARY_FILE}: the first line must be exactly 'v1'")
    headings = [heading for heading, _ in _sections(text, "## ")]
    positions = []
    for wanted in SUMMARY_SECTIONS:
        if headings.count(wanted) != 1:
            problems.append(f"{SUMMARY_FILE}: section '## {wanted}' must appear exactly once")
        else:
            positions.append(headings.index(wanted))
    if positions != sorted(positions):
        problems.append(
            f"{SUMMARY_FILE}: sections are out of order (want {', '.join(SUMMARY_SECTIONS)})"
        )
    problems += _style_problems(SUMMARY_FILE, text, bullet_sections=True)
    tokens = count_tokens(text)
    if tokens > SUMMARY_TOKEN_BUDGET:
        problems.append(f"{SUMMARY_FILE}: {tokens} tokens, over the {SUMMARY_TOKEN_BUDGET} budget")
    whats = "\n".join(
        "\n".join(body)
        for heading, body in _sections(text, "## ")
        if heading == SUMMARY_SECTIONS[3]
    )
    return problems, whats


def _check_memory(text: str, whats_in_memory: str) -> list[str]:
    problems = _style_problems(MEMORY_FILE, text, bullet_sections=True)
    for group, _ in _sections(text, "# "):
        if not group.startswith("Task Group:"):
            continue
        name = group[len("Task Group:") :].strip()
        if name not in whats_in_memory:
            problems.append(f"{MEMORY_FILE}: task group '{name}' is not in What's in Memory")
    for task, body in _sections(text, "## "):
        if not task.startswith("Task "):
            continue
        body = _until_heading(body)
        for needed in ("### rollout_summary_files", "### keywords"):
            if needed not in (line.strip() for line in body):
                problems.append(f"{MEMORY_FILE}: '## {task}' has no '{needed}'")
    return problems


def _until_heading(body: list[str]) -> list[str]:
    """Lines up to the next ``#`` or ``##`` heading (``###`` ones belong to the task)."""
    kept = []
    for line in body:
        if line.startswith("# ") or line.startswith("## "):
            break
        kept.append(line)
    return kept


def _check_raw(text: str) -> tuple[list[str], list[str]]:
    """Problems of raw_memories.md and the rollout summary files it names."""
    problems = []
    lines = text.splitlines()
    if not lines or lines[0] != RAW_HEADER:
        problems.append(f"{RAW_MEMORIES_FILE}: the first line must be '{RAW_HEADER}'")
    if RAW_MERGED not in lines and RAW_EMPTY not in lines:
        problems.append(f"{RAW_MEMORIES_FILE}: neither '{RAW_MERGED}' nor '{RAW_EMPTY}' found")
    named = [
        line.split(":", 1)[1].strip() for line in lines if line.startswith("rollout_summary_file:")
    ]
    return problems, named


def _front_matter(text: str) -> dict[str, str] | None:
    """The ``key: value`` lines between a first line ``---`` and the next ``---`` (None: no front matter)."""
    lines = text.splitlines()
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        return None
    found: dict[str, str] = {}
    for line in lines[1 : lines.index("---", 1)]:
        key, sep, value = line.partition(":")
        if sep:
            found[key.strip()] = value.strip()
    return found


def _check_skills(path: Path, memory: str | None) -> list[str]:
    """Each ``skills/<name>/SKILL.md``: front matter with ``name`` (= its folder) and ``description``,
    named by MEMORY.md; and each skill MEMORY.md names exists."""
    problems: list[str] = []
    folder = path / SKILLS_DIR
    present: set[str] = set()
    if folder.is_dir() and not folder.is_symlink():
        for entry in sorted(folder.iterdir()):
            name = entry.name
            present.add(name)
            where = f"{SKILLS_DIR}/{name}/{SKILL_FILE}"
            if not _SKILL_NAME.match(name):
                problems.append(f"{SKILLS_DIR}/{name}: a skill folder name must be lowercase words joined by hyphens")
            file = entry / SKILL_FILE
            if entry.is_symlink() or not entry.is_dir() or file.is_symlink() or not file.is_file():
                problems.append(f"{where} is missing (or not a regular file)")
                continue
            try:
                front = _front_matter(file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as error:
                problems.append(f"{where} cannot be read as UTF-8: {error}")
                continue
            if front is None:
                problems.append(f"{where}: no front matter (a first line '---' and a closing '---')")
                continue
            if front.get("name") != name:
                problems.append(f"{where}: front matter name {front.get('name', '')!r} does not match its folder")
            if not front.get("description", "").strip('"').strip():
                problems.append(f"{where}: front matter has no description")
            if memory is not None and where not in memory:
                problems.append(f"{where} is not referenced from {MEMORY_FILE}")
    for name in sorted(set(_SKILL_REF.findall(memory or "")) - present):
        problems.append(f"referenced {SKILLS_DIR}/{name}/{SKILL_FILE} does not exist")
    return problems


def validate_folder(path: Path, count_tokens: Callable[[str], int]) -> list[str]:
    """Problems found in the memory folder at ``path`` (an empty list means valid).

    Checks: memory_summary.md starts with ``v1`` and has its four sections once
    each and in order, within 2,500 tokens by ``count_tokens``; MEMORY.md's task
    groups all appear in What's in Memory and each ``## Task`` has
    ``### rollout_summary_files`` and ``### keywords``; ``-`` bullets only, no
    numbered lists in bullet sections, no bold; raw_memories.md's header;
    every referenced ``rollout_summaries/*.md`` file exists; and every
    ``skills/<name>/SKILL.md`` has front matter whose ``name`` is its folder
    and a ``description``, and MEMORY.md names it (and only skills that exist).
    """
    problems: list[str] = []
    if not path.is_dir():
        return [f"{path} is not a directory"]
    summary = _read(path / SUMMARY_FILE, problems)
    whats = ""
    if summary is not None:
        summary_problems, whats = _check_summary(summary, count_tokens)
        problems += summary_problems
    memory = _read(path / MEMORY_FILE, problems)
    referenced: list[str] = []
    if memory is not None:
        problems += _check_memory(memory, whats)
        referenced += _ROLLOUT_REF.findall(memory)
    raw = _read(path / RAW_MEMORIES_FILE, problems)
    if raw is not None:
        raw_problems, named = _check_raw(raw)
        problems += raw_problems
        referenced += named
    for name in sorted(set(referenced)):
        target = path / ROLLOUT_DIR / name
        if "/" in name or name.startswith(".") or not target.is_file() or target.is_symlink():
            problems.append(f"referenced {ROLLOUT_DIR}/{name} does not exist")
    problems += _check_skills(path, memory)
    return problems
