"""An offline, deterministic stand-in for the phase-2 model (a heuristic, not a language model).

The same request always gives the same plan (a ``ConsolidationPlan``, as a
model would answer), without a network. ``HeuristicConsolidator``

- turns each input into a task item;
- parses the bullets of the raw memories' sections (Codex's layout, as
  ``heuristic_extractor`` writes it) into preference / knowledge / failure
  items, merged across sessions by normalised text;
- revises existing items whose evidence changed, and retires items whose
  evidence was all removed;
- scopes a preference the user stated for all their projects ("for all my
  projects", "in general", "I always", ...: ``domain.user_wide``) globally;
- ends the valid time of a fact a later session replaced: "`make serve`
  passed" is invalidated when a newer session of the same project saw
  `make serve` fail and another command work, or the user said "use X
  instead of `make serve`"; when both sessions arrive in one run, the stale
  fact is not added at all;
- learns skills from the raw memories' ``Procedure:`` sections, and
  revises or invalidates them as later sessions fail at their steps (the
  rule is in ``heuristic_skills``);
- applies the user's notes, each only to items of its own scope: a
  ``remember`` note becomes an item (a preference unless it obviously states
  a failure or a fact) citing the note's id as its evidence, or is cited on
  the item of its scope that already says it (so that item stands while any
  note asking for it does; a global note repeating a project's item gets a
  user-wide item of its own); a ``correct`` note revises the item it is
  about (the item of the note's scope sharing the most words with it, above
  a threshold) with the note's text, citing the note and the item's
  evidence, or becomes a new item when no item matches.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from mnemolog.adapters.heuristic_skills import is_skill_note, scope_tail, skill_edits
from mnemolog.domain.extraction import TokenUsage
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.ports import (
    ConsolidationAnswer,
    ConsolidationRequest,
    InputForModel,
    ItemForModel,
    NoteForModel,
)
from mnemolog.domain.user_wide import is_user_wide

__all__ = ["HeuristicConsolidator", "normalise", "parse_raw_memory"]

_CONSOLIDATION_VERSION = (
    "mnemolog-heuristic-consolidation-v5: task per input, bullets merged by normalised text, "
    "user-wide preferences global, replaced commands invalidated, notes applied as evidence to items of their scope, "
    "skills from procedures that succeeded in two sessions (revised and invalidated by later ones)"
)

_PASSED = re.compile(r"^`(?P<command>[^`]+)` (passed|works|worked)\b")
_REPLACED_BY_FIX = re.compile(r"^`(?P<old>[^`]+)` failed.* -> `(?P<new>[^`]+)` worked$")
_REPLACED_BY_WORDS = (
    re.compile(
        r"\buse\s+`(?P<new>[^`]+)`[^`]*?\b(?:instead of|rather than|not)\s+`(?P<old>[^`]+)`", re.IGNORECASE
    ),
    re.compile(
        r"`(?P<old>[^`]+)`\s+(?:is gone|was removed|no longer (?:works|exists)|(?:was|has been|got) replaced)"
        r"(?:[^`]*`(?P<new>[^`]+)`)?",
        re.IGNORECASE,
    ),
)


@dataclass(frozen=True)
class _Replacement:
    """A command a session found replaced: when, where, and by what."""

    old: str
    new: str | None
    session_id: str
    scope: str
    at: datetime | None
    how: str


def _replacements(kind: ItemKindName, text: str) -> list[tuple[str, str | None, str]]:
    """(old command, new command, how) that a bullet says replaced an old command."""
    found: list[tuple[str, str | None, str]] = []
    if kind == ItemKindName.FAILURE:
        match = _REPLACED_BY_FIX.match(text)
        if match and match.group("old") != match.group("new") and "first, then" not in text:
            found.append((match.group("old"), match.group("new"), "failed, and another command worked"))
    if kind == ItemKindName.PREFERENCE:
        for pattern in _REPLACED_BY_WORDS:
            for match in pattern.finditer(text):
                found.append((match.group("old"), match.group("new"), "was replaced, the user said"))
    return found


_PASSED_LIST = re.compile(r"^Commands that passed: (.*)$", re.MULTILINE)


def _passed_commands(text: str) -> set[str]:
    """The commands a fact or a task record says passed."""
    match = _PASSED.match(text.strip())
    found = {match.group("command")} if match else set()
    for listed in _PASSED_LIST.findall(text):
        found.update(re.findall(r"`([^`]+)`", listed))
    return found

_Op = Literal["add", "revise", "retire", "invalidate"]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalise(text: str) -> str:
    """Lowercase, strip punctuation, collapse whitespace: the key items are merged by."""
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_SECTIONS = {
    "preference signals": ItemKindName.PREFERENCE,
    "reusable knowledge": ItemKindName.KNOWLEDGE,
    "failures and how to do differently": ItemKindName.FAILURE,
}


@dataclass(frozen=True)
class ParsedMemory:
    """A raw memory split into its front matter and its section bullets."""

    front_matter: dict[str, str]
    bullets: tuple[tuple[ItemKindName, str], ...]
    task_titles: tuple[str, ...]


def parse_raw_memory(raw: str) -> ParsedMemory:
    """Parse Codex's raw-memory layout leniently (front matter, ``### Task`` blocks, bullets)."""
    front: dict[str, str] = {}
    bullets: list[tuple[ItemKindName, str]] = []
    titles: list[str] = []
    section: ItemKindName | None = None
    in_body = False
    for line in raw.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            in_body = True
            section = None
            match = re.match(r"#+\s*Task\s*\d*\s*:?\s*(.*)", stripped, re.IGNORECASE)
            if match and match.group(1):
                titles.append(match.group(1).strip())
            continue
        if not in_body:
            if stripped == "---" or not stripped:
                continue
            key, sep, value = stripped.partition(":")
            if sep and re.fullmatch(r"[A-Za-z_]+", key.strip()):
                front[key.strip().lower()] = value.strip()
                continue
            in_body = True
        heading = stripped.rstrip(":").strip().lower()
        if stripped.endswith(":") and heading in _SECTIONS:
            section = _SECTIONS[heading]
        elif stripped.endswith(":") and heading in ("references", "procedure"):
            section = None  # the procedure's steps are read by heuristic_skills.parse_procedure
        elif section is not None and stripped[:2] in ("- ", "* "):
            text = stripped[2:].strip()
            if text and normalise(text) not in ("none", "n a"):
                bullets.append((section, text))
    return ParsedMemory(front_matter=front, bullets=tuple(bullets), task_titles=tuple(titles))


def _keywords(value: str) -> tuple[str, ...]:
    value = value.strip().strip("[]")
    words = (word.strip().strip("'\"") for word in value.split(","))
    return tuple(dict.fromkeys(word for word in words if word))


@dataclass
class _Candidate:
    kind: ItemKindName
    text: str
    task_group: str
    title: str
    keywords: tuple[str, ...]
    evidence: set[str]
    scopes: set[str]
    valid_from: datetime | None
    reason: str

    @property
    def scope(self) -> str:
        return next(iter(self.scopes)) if len(self.scopes) == 1 else GLOBAL_SCOPE


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return min(a, b)


def _handle_key(handle: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", handle)
    return (int(digits) if digits else 0, handle)


def _edit(op: _Op, candidate: _Candidate, target: str | None = None) -> Edit:
    return Edit(
        op=op,
        target=target,
        kind=candidate.kind,
        scope=candidate.scope,
        task_group=candidate.task_group,
        title=candidate.title,
        text=candidate.text,
        keywords=candidate.keywords,
        evidence=tuple(sorted(candidate.evidence)),
        valid_from=candidate.valid_from,
        reason=candidate.reason,
    )


def _kind(value: str) -> ItemKindName:
    try:
        return ItemKindName(value)
    except ValueError:
        return ItemKindName.KNOWLEDGE


def _from_item(item: ItemForModel, op: _Op, evidence: Iterable[str], reason: str) -> Edit:
    return Edit(
        op=op,
        target=item.handle,
        kind=_kind(item.kind),
        scope=item.scope,
        task_group=item.task_group,
        title=item.title,
        text=item.text,
        keywords=tuple(item.keywords),
        evidence=tuple(sorted(evidence)),
        reason=reason,
    )


def front_title(parsed: ParsedMemory) -> str:
    """What the session was for: the raw memory's task, else its first task title."""
    return parsed.front_matter.get("task") or (parsed.task_titles[0] if parsed.task_titles else "")


def _group_of(scope: str) -> str:
    """The task group of a session whose raw memory names none: its project, else "no project folder"."""
    return "no project folder" if scope in ("unknown", "") else scope_tail(scope)


def _task_candidate(entry: InputForModel, parsed: ParsedMemory) -> _Candidate:
    front = parsed.front_matter
    summary_line = next((line for line in entry.rollout_summary.splitlines() if line.strip()), "")
    title = (
        front.get("task") or (parsed.task_titles[0] if parsed.task_titles else "") or summary_line
    )
    outcome = front.get("task_outcome")
    if outcome and outcome not in title:
        title = f"{title} ({outcome})"
    return _Candidate(
        kind=ItemKindName.TASK,
        text=entry.rollout_summary.strip() or front.get("description", ""),
        task_group=front.get("task_group") or _group_of(entry.scope),
        title=_clip(title, 160),
        keywords=_keywords(front.get("keywords", "")),
        evidence={entry.session_id},
        scopes={entry.scope},
        valid_from=entry.updated_at,
        reason=f"task record of session {entry.session_id}",
    )


class HeuristicConsolidator:
    """A deterministic heuristic consolidator (not a language model); no network.

    The same request always gives the same plan: edits are sorted by
    operation, target handle, kind, scope and normalised text.
    """

    name = "heuristic"
    model = "heuristic"
    prompt_hash = _sha256(_CONSOLIDATION_VERSION)

    def consolidate(self, request: ConsolidationRequest) -> ConsolidationAnswer:
        """Build a plan from the request's inputs, items, removals and notes."""
        removed = set(request.removed_sessions)
        items = sorted(request.items, key=lambda item: _handle_key(item.handle))
        tasks, facts, replacements = self._candidates(request)
        inputs_at = {entry.session_id: entry.updated_at for entry in request.inputs}
        edits: list[Edit] = []
        matched: set[str] = set()

        by_text: dict[str, ItemForModel] = {}
        by_session_task: dict[str, ItemForModel] = {}
        for item in items:
            if all(session in removed for session in item.evidence) and item.evidence:
                continue
            by_text.setdefault(normalise(item.text), item)
            if item.kind == ItemKindName.TASK and len(item.evidence) == 1:
                by_session_task.setdefault(item.evidence[0], item)

        # An unchanged input was consolidated before: what it says that memory no longer holds was
        # taken out on purpose (a correction, a forget note), so it is not added again.
        fresh = {entry.session_id for entry in request.inputs if entry.change != "unchanged"}

        for session, candidate in sorted(tasks.items()):
            existing = by_session_task.get(session)
            replaced = _replaced(candidate.text, candidate.scope, candidate.evidence, inputs_at, replacements)
            if existing is None:
                if session in fresh and replaced is None:
                    edits.append(_edit("add", candidate))
                continue
            matched.add(existing.handle)
            if replaced is not None:
                edits.append(_invalidation(existing, replaced))
                continue
            if existing.edited_by_user:
                # A person's words stand: the sessions may still add or lose evidence.
                if set(existing.evidence) != candidate.evidence:
                    edits.append(_from_item(existing, "revise", candidate.evidence, "evidence changed"))
            elif (
                normalise(existing.text) != normalise(candidate.text)
                or existing.title != candidate.title
                or set(existing.evidence) != candidate.evidence
            ):
                edits.append(_edit("revise", candidate, existing.handle))

        for key, candidate in sorted(facts.items()):
            existing = by_text.get(key[1])
            replaced = _replaced(candidate.text, candidate.scope, candidate.evidence, inputs_at, replacements)
            if existing is None:
                if candidate.evidence & fresh and replaced is None:
                    edits.append(_edit("add", candidate))
                continue
            matched.add(existing.handle)
            if replaced is not None:
                edits.append(_invalidation(existing, replaced))
                continue
            evidence = (set(existing.evidence) - removed) | candidate.evidence
            if evidence != set(existing.evidence):
                candidate.evidence = evidence
                if existing.scope == GLOBAL_SCOPE:
                    candidate.scopes = {GLOBAL_SCOPE}
                else:
                    candidate.scopes.add(existing.scope)
                candidate.reason = "evidence changed"
                edits.append(_edit("revise", candidate, existing.handle))

        for item in items:
            # Items no input of this run restates: a newer session may still have replaced them.
            if item.handle in matched:
                continue
            replaced = _replaced(item.text, item.scope, set(item.evidence), inputs_at, replacements)
            if replaced is not None:
                matched.add(item.handle)
                edits.append(_invalidation(item, replaced))

        skills = self._skills(request, removed)
        matched.update(edit.target for edit in skills if edit.target)
        edits += skills

        note_edits, corrected, asked = self._notes(request, items, matched, removed)
        # A correction replaces whatever else this plan would do to the item it corrects.
        edits = [edit for edit in edits if edit.target not in corrected] + note_edits
        edits = _cite_notes(edits, asked, items, removed, matched)
        for item in items:
            if item.handle in matched or not item.evidence:
                continue
            remaining = set(item.evidence) - removed
            if not remaining:
                edits.append(
                    _from_item(item, "retire", item.evidence, "all evidence sessions were removed")
                )
            elif remaining != set(item.evidence):
                edits.append(
                    _from_item(item, "revise", remaining, "some evidence sessions were removed")
                )

        plan = ConsolidationPlan(edits=tuple(_sorted(_dedupe(edits))), user_profile="")
        return ConsolidationAnswer(
            plan=plan, model=self.model, prompt_hash=self.prompt_hash, usage=TokenUsage()
        )

    @staticmethod
    def _candidates(
        request: ConsolidationRequest,
    ) -> tuple[dict[str, _Candidate], dict[tuple[str, str], _Candidate], list[_Replacement]]:
        tasks: dict[str, _Candidate] = {}
        facts: dict[tuple[str, str], _Candidate] = {}
        replacements: list[_Replacement] = []
        for entry in sorted(request.inputs, key=lambda entry: entry.session_id):
            parsed = parse_raw_memory(entry.raw_memory)
            if not (entry.raw_memory.strip() or entry.rollout_summary.strip()):
                continue
            task = _task_candidate(entry, parsed)
            tasks[entry.session_id] = task
            for kind, text in parsed.bullets:
                key = (kind.value, normalise(text))
                if not key[1]:
                    continue
                for old, new, how in _replacements(kind, text):
                    replacements.append(_Replacement(old, new, entry.session_id, entry.scope, entry.updated_at, how))
                wide = kind == ItemKindName.PREFERENCE and is_user_wide(text)
                scope = GLOBAL_SCOPE if wide else entry.scope
                candidate = facts.get(key)
                if candidate is None:
                    facts[key] = _Candidate(
                        kind=kind,
                        text=text,
                        task_group="" if wide else task.task_group,
                        title="",  # a bullet is its own title; only task records carry one
                        keywords=_fact_keywords(text, task.keywords, front_title(parsed)),
                        evidence={entry.session_id},
                        scopes={scope},
                        valid_from=entry.updated_at,
                        reason=f"{kind.value} the user stated for every project" if wide else f"{kind.value} from session {entry.session_id}",
                    )
                else:
                    candidate.evidence.add(entry.session_id)
                    candidate.scopes.add(scope)
                    candidate.valid_from = _earliest(candidate.valid_from, entry.updated_at)
                    more = _fact_keywords(text, task.keywords, front_title(parsed))
                    candidate.keywords = tuple(dict.fromkeys([*candidate.keywords, *more]))[:16]
                    if len(candidate.scopes) > 1:
                        candidate.task_group = ""
                        candidate.reason = f"{kind.value} seen in {len(candidate.scopes)} projects"
        return tasks, facts, replacements

    @staticmethod
    def _skills(request: ConsolidationRequest, removed: set[str]) -> list[Edit]:
        """The skill rule's edits (``heuristic_skills``): skills learnt, revised or ended by the sessions' procedures."""
        groups: dict[str, str] = {}
        titles: dict[str, str] = {}
        for entry in request.inputs:
            parsed = parse_raw_memory(entry.raw_memory)
            groups[entry.session_id] = parsed.front_matter.get("task_group") or _group_of(entry.scope)
            titles[entry.session_id] = _clip(front_title(parsed), 120)
        note_text = {note.note_id: _note_text(note.text) for note in request.notes}
        return skill_edits(request.inputs, request.items, request.notes, removed, groups, titles, note_text)

    @staticmethod
    def _notes(
        request: ConsolidationRequest,
        items: list[ItemForModel],
        matched: set[str],
        removed: set[str],
    ) -> tuple[list[Edit], set[str], dict[str, set[str]]]:
        """The edits the notes ask for, the handles of the items corrections revise, and the notes to cite on items.

        A note only ever touches items of its own scope: a ``remember`` note
        whose words an item of its scope already holds is cited on that item
        (so the item stands while any note asking for it does); one whose
        words only an item of another scope holds (a global note repeating a
        project's) gets an item of its own scope.
        """
        edits: list[Edit] = []
        corrected: set[str] = set()
        asked: dict[str, set[str]] = {}
        adding: dict[tuple[str, str], int] = {}  # the add edit of each (scope, text) a note of this run asks for
        holding: dict[tuple[str, str], ItemForModel] = {}
        for item in items:
            if item.evidence and all(e in removed for e in item.evidence):
                continue
            holding.setdefault((item.scope, normalise(item.text)), item)
        for note in sorted(request.notes, key=lambda note: note.note_id):
            text = _note_text(note.text)
            key = normalise(text)
            if not key:
                continue
            scope = note.scope or GLOBAL_SCOPE
            if note.intent == "remember":
                held = holding.get((scope, key))
                if held is not None:
                    if note.note_id not in held.evidence:
                        asked.setdefault(held.handle, set()).add(note.note_id)
                elif (scope, key) in adding:  # two notes of this run ask for the same: one item cites both
                    at = adding[(scope, key)]
                    edits[at] = edits[at].model_copy(update={"evidence": (*edits[at].evidence, note.note_id)})
                elif not is_skill_note(text):  # a skill note is the skill rule's
                    adding[(scope, key)] = len(edits)
                    edits.append(_note_item(note, text))
            elif note.intent == "correct":
                target = _corrected_item(text, scope, items, removed, corrected)
                if target is None:
                    edits.append(_note_item(note, text))
                    continue
                matched.add(target.handle)
                corrected.add(target.handle)
                evidence = {note.note_id, *(set(target.evidence) - removed)}
                edits.append(
                    Edit(
                        op="revise",
                        target=target.handle,
                        kind=_kind(target.kind),
                        scope=target.scope,
                        task_group=target.task_group,
                        title="",  # the old title may state what the correction replaces
                        text=text,
                        keywords=tuple(target.keywords),
                        evidence=tuple(sorted(evidence)),
                        reason=f"user correction {note.note_id}",
                    )
                )
            elif note.intent == "forget":
                for item in items:
                    if len(key) >= 3 and key in normalise(item.text) and item.handle not in matched:
                        matched.add(item.handle)
                        edits.append(
                            _from_item(item, "retire", item.evidence, f"user note {note.note_id}")
                        )
        return edits, corrected, asked


def _cite_notes(
    edits: list[Edit], asked: dict[str, set[str]], items: list[ItemForModel], removed: set[str], matched: set[str]
) -> list[Edit]:
    """``edits`` with each note that asks for what an item already says cited on that item.

    The item's revise in this plan gains the notes; an item the plan leaves
    alone gets a revise of its evidence alone. An item this plan retires or
    invalidates is left to it (the note stays pending).
    """
    if not asked:
        return edits
    out: list[Edit] = []
    planned: set[str] = set()
    for edit in edits:
        notes = asked.get(edit.target or "") if edit.target else None
        if edit.target:
            planned.add(edit.target)
        if notes and edit.op == "revise":
            edit = edit.model_copy(update={"evidence": tuple(sorted({*edit.evidence, *notes}))})
        out.append(edit)
    for item in items:
        notes = asked.get(item.handle)
        if not notes or item.handle in planned:
            continue
        matched.add(item.handle)
        evidence = (set(item.evidence) - removed) | notes
        out.append(_from_item(item, "revise", evidence, f"user note {', '.join(sorted(notes))} asks for it too"))
    return out


def _fact_keywords(text: str, task_keywords: tuple[str, ...], title: str = "") -> tuple[str, ...]:
    """A fact's own handles (the tools its commands name), then its session's, then what the session was for."""
    own: list[str] = []
    for span in re.findall(r"`([^`]+)`", text):
        words = [w for w in span.split() if re.match(r"^[A-Za-z][\w.+-]*$", w)]
        own.extend(words[:2])
    own.extend(re.findall(r"\b([A-Z][A-Za-z]+(?:Error|Exception))\b", text))
    mentioned = [k for k in task_keywords if k.lower() in text.lower()]
    # What the session was for, kept whole: split into words, a value forgotten later could survive
    # as fragments that no tombstone matches.
    purpose = [" ".join(title.split())] if title.strip() else []
    return tuple(dict.fromkeys([*own, *mentioned, *purpose]))[:12]



def _replaced(
    text: str,
    scope: str,
    evidence: set[str],
    inputs_at: dict[str, datetime | None],
    replacements: list[_Replacement],
    valid_from: datetime | None = None,
) -> _Replacement | None:
    """The newest replacement of a command the text says passed, from a session newer than its evidence.

    A fact says it as "`X` passed"; a task record (the heuristic's rollout
    summary) as "Commands that passed: `X`, `Y`".
    """
    commands = _passed_commands(text)
    if not commands:
        return None
    known = [inputs_at[e] for e in evidence if inputs_at.get(e) is not None]
    newest_evidence = max([*(t for t in known if t is not None), *([valid_from] if valid_from else [])], default=None)
    found: _Replacement | None = None
    for replacement in replacements:
        if replacement.old not in commands or replacement.scope != scope or replacement.session_id in evidence:
            continue
        if newest_evidence is not None and (replacement.at is None or replacement.at <= newest_evidence):
            continue
        if found is None or (replacement.at and found.at and replacement.at > found.at):
            found = replacement
    return found


def _invalidation(item: ItemForModel, replaced: _Replacement) -> Edit:
    """End an item's valid time at the session that replaced its command, saying why."""
    when = replaced.at.date().isoformat() if replaced.at else "a later session"
    instead = f"; `{replaced.new}` is used instead" if replaced.new else ""
    reason = f"superseded on {when} by session {replaced.session_id}: `{replaced.old}` {replaced.how}{instead}"
    return _from_item(item, "invalidate", (replaced.session_id,), reason).model_copy(update={"valid_from": replaced.at})


_NOTE_LEAD = re.compile(r"^\s*(?:remember|correction|correct|note)\b\s*[:,.-]?\s*", re.IGNORECASE)
_FRONT_MATTER = re.compile(r"\A\s*---\n.*?\n---\s*\n", re.DOTALL)
_PREFERENCE_NOTE = re.compile(
    r"\b(always|never|prefer|preferably|don't|dont|do not|please|must|should|avoid|make sure|"
    r"instead of|from now on|i want|i like|i'd like|i|my|me)\b",
    re.IGNORECASE,
)
_FAILURE_NOTE = re.compile(
    r"\b(fails?|failed|failing|breaks?|broke|broken|crash(?:es|ed)?|errors?|does not work|doesn't work)\b",
    re.IGNORECASE,
)
_FACT_NOTE = re.compile(r"`|\d|/|=|\b[\w-]+\.[a-z]{1,4}\b")
_STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "not", "no", "nor", "of", "to", "in", "on", "at", "for",
        "with", "by", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its",
        "this", "that", "these", "those", "there", "here", "now", "then", "than", "so", "do", "does",
        "did", "done", "has", "have", "had", "will", "would", "can", "could", "should", "must", "may",
        "might", "use", "uses", "used", "using", "we", "you", "they", "he", "she", "i", "me", "my",
        "our", "your", "their"
    }
)
_CORRECTION_SHARED = 2  # at least this many words in common ...
_CORRECTION_OVERLAP = 0.4  # ... and this share of the shorter text's words


def _note_text(text: str) -> str:
    """A note's statement: without front matter and a leading "Remember:" / "Correction:"."""
    body = _FRONT_MATTER.sub("", text, count=1)
    return " ".join(_NOTE_LEAD.sub("", body.strip(), count=1).split())


def _note_kind(text: str) -> ItemKindName:
    """A preference, unless the note obviously states a failure or a fact."""
    if _PREFERENCE_NOTE.search(text):
        return ItemKindName.PREFERENCE
    if _FAILURE_NOTE.search(text):
        return ItemKindName.FAILURE
    if _FACT_NOTE.search(text):
        return ItemKindName.KNOWLEDGE
    return ItemKindName.PREFERENCE


def _note_item(note: NoteForModel, text: str) -> Edit:
    """A new item stating what the note says, with the note as its evidence."""
    scope = note.scope or GLOBAL_SCOPE
    return Edit(
        op="add",
        kind=_note_kind(text),
        scope=scope,
        task_group="" if scope == GLOBAL_SCOPE else scope_tail(scope),
        title="",
        text=text,
        evidence=(note.note_id,),
        reason=f"user note {note.note_id}",
    )


def _words(text: str) -> set[str]:
    return {word for word in normalise(text).split() if word not in _STOPWORDS}


def _corrected_item(
    text: str, scope: str, items: list[ItemForModel], removed: set[str], taken: set[str]
) -> ItemForModel | None:
    """The item of ``scope`` a correction is about: the most words in common, above the threshold.

    Task records are history, not claims, and are never corrected; an item
    whose evidence was all removed is on its way out.
    """
    wanted = _words(text)
    best: tuple[float, int, ItemForModel] | None = None
    for item in items:
        if item.scope != scope or item.kind == ItemKindName.TASK or item.handle in taken:
            continue
        if item.evidence and all(e in removed for e in item.evidence):
            continue
        words = _words(f"{item.title} {item.text}")
        shared = len(wanted & words)
        if shared < _CORRECTION_SHARED or not words:
            continue
        overlap = shared / min(len(wanted), len(words))
        if overlap >= _CORRECTION_OVERLAP and (best is None or (overlap, shared) > best[:2]):
            best = (overlap, shared, item)
    return best[2] if best is not None else None


_OP_ORDER = {"add": 0, "revise": 1, "invalidate": 2, "retire": 3}


def _dedupe(edits: list[Edit]) -> list[Edit]:
    seen: set[tuple[str, str | None, str, str]] = set()
    unique: list[Edit] = []
    for edit in edits:
        key = (edit.op, edit.target, edit.kind.value, normalise(edit.text))
        if key not in seen:
            seen.add(key)
            unique.append(edit)
    return unique


def _sorted(edits: list[Edit]) -> list[Edit]:
    return sorted(
        edits,
        key=lambda edit: (
            _OP_ORDER[edit.op],
            _handle_key(edit.target or ""),
            edit.kind.value,
            edit.scope,
            normalise(edit.text),
            edit.evidence,
        ),
    )
