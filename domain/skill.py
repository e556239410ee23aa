"""Skills: reusable procedures as memory items, and the rules that judge them.

A skill is a ``MemoryItem`` of kind ``skill``. Its ``text`` is the
description (when to use it); ``Skill`` holds the rest: the name (a slug, the
folder ``skills/<name>/`` it renders to, unique among the active skills of a
scope), the ordered steps (each a command, an action in words, or both) and
the commands and files the steps rely on.

Everything here is pure: the name rule, the texts a tombstone or a redactor
must look at, and how two sessions' procedures compare (the steps each ran
successfully, in order).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

MIN_STEPS = 2  # fewer is a fact, not a procedure (what plan checks enforce for any skill edit)
PROCEDURE_STEPS = 3  # the offline rule: a skill needs a procedure of this many steps ...
PROCEDURE_SESSIONS = 2  # ... that succeeded in this many sessions of one scope
NAME_MAX = 48
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class SkillStep(BaseModel):
    """One step of a skill: the command it runs and/or what it does, in words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(default="", description="The shell command the step runs, if it is one.")
    action: str = Field(default="", description="What the step does, in words (when it is not a command, or to explain it).")


class Skill(BaseModel):
    """What a skill item carries beside its description (the item's text)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="A slug (lowercase words and hyphens): its folder skills/<name>/, unique per scope.")
    steps: tuple[SkillStep, ...] = Field(default=(), description="The steps, in order.")
    relies_on: tuple[str, ...] = Field(default=(), description="The commands (tools) and files the steps rely on.")

    @property
    def commands(self) -> tuple[str, ...]:
        """The steps' commands, in order."""
        return tuple(step.command for step in self.steps if step.command)


SKILL_SEALED = ("skill.name", "skill.steps.*.command", "skill.steps.*.action", "skill.relies_on.*")
"""The sealed paths of a skill inside an item event (see ``domain.sealing``)."""


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a skill's name (a folder name), or None."""
    if not name:
        return "a skill needs a name"
    if len(name) > NAME_MAX:
        return f"the skill name is longer than {NAME_MAX} characters"
    if not _NAME.match(name):
        return "the skill name must be lowercase words joined by hyphens (a folder name)"
    return None


def skill_problem(skill: Skill | None) -> str | None:
    """Why ``skill`` cannot be stored (no name, a bad name, fewer than ``MIN_STEPS`` steps), or None."""
    if skill is None:
        return "a skill edit needs the skill (name and steps)"
    problem = name_problem(skill.name)
    if problem:
        return problem
    steps = [step for step in skill.steps if step.command.strip() or step.action.strip()]
    if len(steps) < MIN_STEPS:
        return f"a skill needs at least {MIN_STEPS} steps"
    return None


def slug(text: str, taken: Iterable[str] = ()) -> str:
    """A valid skill name from ``text`` (its first words), made unique against ``taken`` with a number."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    base = ""
    for word in words:
        candidate = f"{base}-{word}" if base else word
        if len(candidate) > NAME_MAX - 3:
            break
        base = candidate
    base = base or "skill"
    used = set(taken)
    name, n = base, 2
    while name in used:
        name, n = f"{base}-{n}", n + 1
    return name


def skill_texts(skill: Skill | None) -> list[str]:
    """Every text of a skill a tombstone, a redactor or a search must see."""
    if skill is None:
        return []
    texts = [skill.name]
    for step in skill.steps:
        texts += [step.command, step.action]
    texts += list(skill.relies_on)
    return [text for text in texts if text]


def map_texts(skill: Skill | None, change: Callable[[str], str]) -> Skill | None:
    """``skill`` with ``change`` applied to each of its texts (redaction, scrubbing); the name too."""
    if skill is None:
        return None
    return Skill(
        name=change(skill.name),
        steps=tuple(
            SkillStep(command=change(s.command) if s.command else "", action=change(s.action) if s.action else "")
            for s in skill.steps
        ),
        relies_on=tuple(change(r) for r in skill.relies_on),
    )


def common_steps(first: Sequence[str], second: Sequence[str]) -> tuple[str, ...]:
    """The longest sequence of steps both ran in the same order (not necessarily adjacent).

    The procedure two sessions share: what each ran between the shared steps
    (a look at a file, a one-off fix) is left out.
    """
    rows, cols = len(first), len(second)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows - 1, -1, -1):
        here, below, word = table[i], table[i + 1], first[i]
        for j in range(cols - 1, -1, -1):
            if word == second[j]:
                here[j] = below[j + 1] + 1
            else:
                right, down = here[j + 1], below[j]
                here[j] = right if right > down else down
    found: list[str] = []
    i = j = 0
    while i < rows and j < cols:
        if first[i] == second[j]:
            found.append(first[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return tuple(found)
