"""The offline consolidator's skill rule: skills learnt from the procedures sessions report.

Phase 1 (``heuristic_extractor``, or a model following the stage-1 prompt)
writes a ``Procedure:`` section into each raw memory: the session's shell
commands in order, each ``ok`` or ``failed (exit N: error line)``. From those:

- create: when the same procedure of at least ``PROCEDURE_STEPS`` (3) steps
  succeeded in at least ``PROCEDURE_SESSIONS`` (2) sessions of one scope, a
  skill with those steps, in that scope, with those sessions as evidence
  (the procedure two sessions share is the longest sequence of commands both
  ran successfully in the same order; what else each ran in between is left
  out; each session is compared with the ``COMPARED_NEIGHBOURS`` (32)
  sessions of its scope that follow it in time, which bounds the work of a
  first import). At least one of them must be new to this run (an unchanged input was
  consolidated before: what memory lacks of it was taken out on purpose). A
  candidate sharing half its steps or more with a skill of its scope is that
  skill, not a new one. A ``remember`` note that asks for a skill or
  procedure and names two or more commands in backticks is a skill too, with
  the note as its evidence;
- revise: when a later session of the scope (new to this run, not yet
  evidence) failed at a step, never ran it successfully afterwards, and ran a
  different command successfully in its place (after the failure, before it
  went on to the skill's next step, or at the end for the last step), that
  command replaces the step; the session joins the evidence. A later session
  that ran all the steps successfully joins the evidence too;
- invalidate: when a later session failed at a step with an error saying the
  command, target or file is gone ("not found", "No rule to make target",
  "unknown command", ...) and nothing worked in its place, the skill's valid
  time ends.

Names are slugs of the steps' distinctive words (``deps-build-test``), unique
in their scope. Everything is deterministic: the same request, the same edits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from mnemolog.adapters.command_outcomes import failure_in
from mnemolog.domain.plan import GLOBAL_SCOPE, Edit, ItemKindName
from mnemolog.domain.ports import InputForModel, ItemForModel, NoteForModel
from mnemolog.domain.project_names import project_label
from mnemolog.domain.skill import (
    PROCEDURE_SESSIONS,
    PROCEDURE_STEPS,
    Skill,
    SkillStep,
    common_steps,
    slug,
)

__all__ = ["ProcedureStep", "is_skill_note", "parse_procedure", "scope_tail", "skill_edits"]

_HEADING = re.compile(r"^\s*#*\s*procedure\s*:?\s*$", re.IGNORECASE)
_STEP = re.compile(r"^\s*(?:[-*]|\d+[.)])\s+`(?P<command>[^`]+)`\s*->\s*(?P<outcome>ok|failed)\b(?:\s*\((?P<detail>.*)\))?\s*$", re.IGNORECASE)
_GONE = re.compile(
    r"not found|No rule to make target|Unknown (command|script|task|target)|Missing script|no such (command|task|script|file)"
    r"|is not recognized|has been removed|no longer exists|does not exist|cannot find|can't open file",
    re.IGNORECASE,
)
_RUNNERS = (
    ("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("npm", "run"), ("pnpm", "run"), ("yarn", "run"), ("bun", "run"),
    ("bundle", "exec"), ("python", "-m"), ("python3", "-m"), ("uv",), ("npm",), ("pnpm",), ("yarn",), ("npx",),
    ("make",), ("just",), ("cargo",), ("go",), ("docker", "compose"), ("sudo",),
)
COMPARED_NEIGHBOURS = 32  # each session is compared with this many of its scope's next sessions in time
_SKILL_NOTE = re.compile(r"\b(skill|procedure|steps)\b", re.IGNORECASE)
_NOTE_NAME = re.compile(r"\bskill\s+`?([a-z0-9]+(?:-[a-z0-9]+)*)`?\s*:", re.IGNORECASE)
_BACKTICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class ProcedureStep:
    """One command a session ran, as its raw memory's ``Procedure:`` section reports it."""

    command: str
    ok: bool
    detail: str = ""


def scope_tail(scope: str) -> str:
    """A scope's project name (``git:github.com/acme/api`` -> ``api``): an offline task group.

    Exactly ``project_label``: a task group that is the project's name carries no forgotten value.
    """
    return project_label(scope)


def parse_procedure(raw_memory: str) -> tuple[ProcedureStep, ...]:
    """The steps of a raw memory's ``Procedure:`` section (lines ``- `cmd` -> ok|failed (...)``), in order."""
    steps: list[ProcedureStep] = []
    inside = False
    for line in raw_memory.splitlines():
        stripped = line.strip()
        if _HEADING.match(stripped):
            inside = True
            continue
        if not inside:
            continue
        if stripped.endswith(":") or stripped.startswith("#"):
            break  # the next section
        match = _STEP.match(stripped)
        if match:
            command = " ".join(match.group("command").split())
            detail = (match.group("detail") or "").strip()
            # "-> ok (exit code: 101 …)": a step whose own words say it failed did not succeed
            ok = match.group("outcome").lower() == "ok" and failure_in(detail) is None
            steps.append(ProcedureStep(command, ok, detail))
    return tuple(steps)


@dataclass(frozen=True)
class _Run:
    """One session's procedure, with what the rule needs to know about the session."""

    session_id: str
    scope: str
    at: datetime | None
    fresh: bool
    group: str
    title: str
    steps: tuple[ProcedureStep, ...]

    @cached_property
    def succeeded(self) -> tuple[str, ...]:
        """The commands that ran successfully, each once, in the order of their first success (compared often)."""
        return tuple(dict.fromkeys(step.command for step in self.steps if step.ok))

    def ran_all(self, commands: Sequence[str]) -> bool:
        """Whether the session ran every one of ``commands`` successfully, in that order."""
        ran = iter(self.succeeded)
        return all(command in ran for command in commands)  # a subsequence: ``in`` consumes the iterator


@dataclass(frozen=True)
class _Outcome:
    """What a later session says about a skill's steps."""

    steps: tuple[str, ...]  # the steps after the session's replacements
    replaced: tuple[tuple[str, str], ...] = ()  # (old, new)
    broken: tuple[tuple[str, str], ...] = ()  # (step, error) with nothing in its place
    held: bool = False  # every step ran successfully


def _judge(commands: Sequence[str], run: _Run) -> _Outcome:
    """Replacements and broken steps ``run`` shows for a skill of ``commands``."""
    steps = list(commands)
    replaced: list[tuple[str, str]] = []
    broken: list[tuple[str, str]] = []
    positions = run.steps
    for k, command in enumerate(commands):
        failures = [i for i, s in enumerate(positions) if s.command == command and not s.ok]
        if not failures or any(s.command == command and s.ok for s in positions[failures[-1] :]):
            continue  # never failed, or ran successfully again later
        failed_at = failures[-1]
        nxt = commands[k + 1] if k + 1 < len(commands) else None
        replacement = None
        for later in positions[failed_at + 1 :]:
            if nxt is not None and later.command == nxt:
                break  # went on to the next step without doing this one another way
            if later.ok and later.command not in commands:
                replacement = later.command
                break
        went_on = nxt is None or any(s.command == nxt and s.ok for s in positions[failed_at + 1 :])
        if replacement is not None and went_on:
            steps[k] = replacement
            replaced.append((command, replacement))
        elif _GONE.search(positions[failed_at].detail):
            broken.append((command, positions[failed_at].detail))
    held = not replaced and not broken and run.ran_all(commands)
    return _Outcome(tuple(steps), tuple(replaced), tuple(broken), held)


def _overlaps(first: Sequence[str], second: Sequence[str]) -> bool:
    """Whether two procedures are one: they share half the steps of the shorter one or more."""
    shared = len(set(first) & set(second))
    return shared * 2 >= min(len(first), len(second))


def _words(command: str) -> list[str]:
    return [w for w in command.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]


def _key_words(command: str) -> list[str]:
    """What a step runs: the words after its runner (``uv run alembic upgrade`` -> alembic, upgrade)."""
    words = _words(command)
    for runner in sorted(_RUNNERS, key=len, reverse=True):
        if tuple(words[: len(runner)]) == runner and len(words) > len(runner):
            words = words[len(runner) :]
            break
    kept = [re.sub(r"^.*/", "", w).split(".")[0] for w in words if not w.startswith("-")]
    return [w for w in kept if w] or ["step"]


def _key_word(command: str) -> str:
    """What a step does in one word: the tool after its runner (``uv run alembic ...`` -> alembic)."""
    return _key_words(command)[0]


def _name(commands: Sequence[str], taken: Iterable[str]) -> str:
    """A slug of the steps' tools; steps that share a tool are named by their subcommand (``mkdocs build``: build)."""
    heads = [_key_word(c) for c in commands]
    words = [
        _key_words(c)[1] if heads.count(head) > 1 and len(_key_words(c)) > 1 else head for c, head in zip(commands, heads, strict=True)
    ]
    return slug(" ".join(dict.fromkeys(words)), taken)


def _relies_on(commands: Sequence[str]) -> tuple[str, ...]:
    """The tools the steps run and the files they name."""
    found: list[str] = []
    for command in commands:
        words = _words(command)
        if words:
            found.append(words[0])
        found.extend(w for w in words[1:] if re.match(r"^[\w./-]+\.[A-Za-z0-9]{1,5}$|^\.?/?[\w.-]+/[\w./-]+$", w) and not w.startswith("-"))
    return tuple(dict.fromkeys(found))[:12]


def _steps(commands: Sequence[str]) -> tuple[SkillStep, ...]:
    return tuple(SkillStep(command=c) for c in commands)


def _description(group: str, runs: Sequence[_Run]) -> str:
    titles = list(dict.fromkeys(r.title for r in runs if r.title))[:2]
    tasks = f' on tasks like "{titles[0]}"' if titles else ""
    where = f" in {group}" if group else ""
    return f"Use when working{where}{tasks}: run these steps in order (they worked together in earlier sessions)."


def _reason_replaced(run: _Run, outcome: _Outcome) -> str:
    swaps = "; ".join(f"`{old}` failed and `{new}` worked in its place" for old, new in outcome.replaced)
    return f"session {run.session_id}: {swaps}"


def _reason_broken(run: _Run, outcome: _Outcome) -> str:
    fails = "; ".join(f"`{step}` failed ({detail})" for step, detail in outcome.broken)
    return f"session {run.session_id}: {fails}, and nothing worked in its place"


@dataclass
class _Working:
    """A skill (existing or about to be created) as the rule changes it in this run."""

    commands: tuple[str, ...]
    evidence: set[str]
    scope: str
    reasons: list[str] = field(default_factory=list)
    broken_reason: str | None = None
    broken_by: str | None = None
    broken_at: datetime | None = None


def _later(runs: Sequence[_Run], working: _Working, at: dict[str, datetime | None]) -> list[_Run]:
    """Sessions of the skill's scope, new to this run, not its evidence, newer than all of it; oldest first."""
    known = [t for t in (at.get(e) for e in working.evidence) if t is not None]
    newest = max(known, default=None)
    found = [
        r for r in runs
        if r.scope == working.scope and r.fresh and r.session_id not in working.evidence
        and (newest is None or (r.at is not None and r.at > newest))
    ]
    return sorted(found, key=lambda r: (r.at or datetime.min, r.session_id))


def _track_later_sessions(working: _Working, runs: Sequence[_Run], at: dict[str, datetime | None]) -> None:
    """Let each later session revise the skill, join its evidence, or break it."""
    for run in _later(runs, working, at):
        if not run.steps:
            continue
        outcome = _judge(working.commands, run)
        if outcome.replaced:
            working.commands = outcome.steps
            working.evidence.add(run.session_id)
            working.reasons.append(_reason_replaced(run, outcome))
        elif outcome.broken:
            working.broken_reason = _reason_broken(run, outcome)
            working.broken_by = run.session_id
            working.broken_at = run.at
            return
        elif outcome.held:
            working.evidence.add(run.session_id)
            working.reasons.append(f"session {run.session_id} ran the steps successfully again")


def _runs(inputs: Sequence[InputForModel], groups: dict[str, str], titles: dict[str, str]) -> list[_Run]:
    return [
        _Run(
            session_id=entry.session_id,
            scope=entry.scope,
            at=entry.updated_at,
            fresh=entry.change != "unchanged",
            group=groups.get(entry.session_id, ""),
            title=titles.get(entry.session_id, ""),
            steps=parse_procedure(entry.raw_memory),
        )
        for entry in sorted(inputs, key=lambda entry: entry.session_id)
    ]


def is_skill_note(text: str) -> bool:
    """A note that asks for a skill: it says skill, procedure or steps, and names two or more commands in backticks."""
    return bool(_SKILL_NOTE.search(text)) and len(_BACKTICKED.findall(text)) >= 2


def _note_skill(note: NoteForModel, text: str, taken: set[str]) -> Edit:
    commands = tuple(dict.fromkeys(" ".join(c.split()) for c in _BACKTICKED.findall(text)))
    scope = note.scope or GLOBAL_SCOPE
    asked = _NOTE_NAME.search(text)
    name = slug(asked.group(1), taken) if asked else _name(commands, taken)
    taken.add(name)
    return Edit(
        op="add",
        kind=ItemKindName.SKILL,
        scope=scope,
        task_group="" if scope == GLOBAL_SCOPE else scope_tail(scope),
        title=name,
        text=text,
        keywords=tuple(dict.fromkeys(_key_word(c) for c in commands)),
        evidence=(note.note_id,),
        reason=f"user note {note.note_id} asks for this skill",
        skill=Skill(name=name, steps=_steps(commands), relies_on=_relies_on(commands)),
    )


def skill_edits(
    inputs: Sequence[InputForModel],
    items: Sequence[ItemForModel],
    notes: Sequence[NoteForModel],
    removed: set[str],
    groups: dict[str, str],
    titles: dict[str, str],
    note_text: dict[str, str],
) -> list[Edit]:
    """The skill edits of one run (see the module docstring): adds, revisions and invalidations.

    ``groups`` and ``titles`` give each session's task group and task title
    (from its raw memory's front matter); ``note_text`` each note's statement.
    """
    runs = _runs(inputs, groups, titles)
    at = {r.session_id: r.at for r in runs}
    edits: list[Edit] = []
    names: dict[str, set[str]] = {}
    known: list[tuple[str, tuple[str, ...]]] = []  # (scope, commands) of every skill this run keeps
    for item in items:
        if item.kind != ItemKindName.SKILL or item.skill is None:
            continue
        names.setdefault(item.scope, set()).add(item.skill.name)
        evidence = set(item.evidence) - removed
        working = _Working(item.skill.commands, set(evidence), item.scope)
        _track_later_sessions(working, runs, at)
        known.append((item.scope, working.commands))
        if not working.evidence:
            continue  # all its evidence is gone: the consolidator retires it
        if working.broken_reason is not None:
            edits.append(
                Edit(
                    op="invalidate", target=item.handle, kind=ItemKindName.SKILL, scope=item.scope, task_group=item.task_group,
                    title=item.title, text=item.text, keywords=item.keywords, evidence=(working.broken_by or "",),
                    valid_from=working.broken_at, reason=working.broken_reason,
                )
            )
        elif working.commands != item.skill.commands or working.evidence != set(item.evidence):
            steps = _steps(working.commands) if working.commands != item.skill.commands else item.skill.steps
            edits.append(
                Edit(
                    op="revise", target=item.handle, kind=ItemKindName.SKILL, scope=item.scope, task_group=item.task_group,
                    title=item.title, text=item.text, keywords=item.keywords, evidence=tuple(sorted(working.evidence)),
                    reason="; ".join(working.reasons) or "some evidence sessions were removed",
                    skill=item.skill.model_copy(update={"steps": steps, "relies_on": _relies_on(working.commands) if working.commands != item.skill.commands else item.skill.relies_on}),
                )
            )
    edits += _new_skills(runs, at, known, names)
    taken_notes: dict[str, set[str]] = names
    for note in sorted(notes, key=lambda n: n.note_id):
        text = note_text.get(note.note_id, "")
        if note.intent == "remember" and is_skill_note(text):
            edits.append(_note_skill(note, text, taken_notes.setdefault(note.scope or GLOBAL_SCOPE, set())))
    return edits


def _new_skills(
    runs: Sequence[_Run], at: dict[str, datetime | None], known: list[tuple[str, tuple[str, ...]]], names: dict[str, set[str]]
) -> list[Edit]:
    """Skills for procedures that succeeded in two or more sessions of one scope and no skill holds yet."""
    candidates: set[tuple[str, tuple[str, ...]]] = set()
    by_scope: dict[str, list[_Run]] = {}
    for run in runs:
        if run.scope not in ("", "unknown") and len(run.succeeded) >= PROCEDURE_STEPS:
            by_scope.setdefault(run.scope, []).append(run)
    compared: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for scope, members in by_scope.items():
        members.sort(key=lambda r: (r.at or datetime.min, r.session_id))
        for i, first in enumerate(members):
            for second in members[i + 1 : i + 1 + COMPARED_NEIGHBOURS]:
                pair = (first.succeeded, second.succeeded)
                if not (first.fresh or second.fresh) or pair in compared:
                    continue
                compared.add(pair)
                if len(set(pair[0]) & set(pair[1])) < PROCEDURE_STEPS:
                    continue
                shared = common_steps(*pair)
                if len(shared) >= PROCEDURE_STEPS:
                    candidates.add((scope, shared))
    edits: list[Edit] = []
    for scope, commands in sorted(candidates, key=lambda c: (c[0], -len(c[1]), c[1])):
        if any(s == scope and _overlaps(commands, held) for s, held in known):
            continue
        members = [r for r in runs if r.scope == scope and r.ran_all(commands)]
        if len(members) < PROCEDURE_SESSIONS or not any(r.fresh for r in members):
            continue
        working = _Working(commands, {r.session_id for r in members}, scope)
        _track_later_sessions(working, runs, at)
        known.append((scope, working.commands))
        if working.broken_reason is not None:
            continue  # it already stopped working: nothing to teach
        taken = names.setdefault(scope, set())
        name = _name(working.commands, taken)
        taken.add(name)
        group = next((r.group for r in members if r.group), "")
        reason = f"the same {len(commands)}-step procedure succeeded in {len(members)} sessions"
        edits.append(
            Edit(
                op="add",
                kind=ItemKindName.SKILL,
                scope=scope,
                task_group=group,
                title=name,
                text=_description(group, members),
                keywords=tuple(dict.fromkeys(_key_word(c) for c in working.commands)),
                evidence=tuple(sorted(working.evidence)),
                valid_from=min((r.at for r in members if r.at is not None), default=None),
                reason="; ".join([reason, *working.reasons]),
                skill=Skill(name=name, steps=_steps(working.commands), relies_on=_relies_on(working.commands)),
            )
        )
    return edits
