"""Offline, deterministic stand-ins for the phase-1 and phase-2 models.

These are heuristics, not language models: they run without a network, give
the same answer for the same input every time, and produce output in the same
shape as a model would (a ``StageOneOutput`` with Codex's raw-memory layout; a
``ConsolidationPlan``). They are for air-gapped use and for tests; their
judgement is shallow by design.

``HeuristicExtractor`` keeps

- explicit user directives and preferences (sentences with always, never,
  prefer, don't, do not, please use, must, should, avoid, ...);
- commands that succeeded after a similar command failed (same tool, similar
  command line, non-zero exit then zero);
- build and test commands that passed (pytest, npm test, cargo test, go test,
  make, uv, pip install, ...);
- failing commands with their error lines;

and answers with all fields empty when a session has none of these.

``HeuristicConsolidator`` turns each input into a task item, parses the
bullets of the raw memories' sections into preference / knowledge / failure
items merged across sessions by normalised text, revises existing items whose
evidence changed, retires items whose evidence was all removed, and adds
items for "remember" notes (and retires items a "forget" note names).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from difflib import SequenceMatcher
from typing import Literal

from mnemolog.domain.extraction import ExtractionAnswer, StageOneOutput, TokenUsage
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit, ItemKindName
from mnemolog.domain.ports import (
    ConsolidationAnswer,
    ConsolidationRequest,
    InputForModel,
    ItemForModel,
)
from mnemolog.domain.transcript import ItemKind, Transcript, TranscriptItem

__all__ = [
    "HEURISTIC_VERSION",
    "HeuristicConsolidator",
    "HeuristicExtractor",
    "normalise",
    "parse_raw_memory",
]

HEURISTIC_VERSION = (
    "mnemolog-heuristic-v1: directives, fixed-after-failure, passing build/test, failures"
)
_CONSOLIDATION_VERSION = (
    "mnemolog-heuristic-consolidation-v1: task per input, bullets merged by normalised text"
)

_DIRECTIVE = re.compile(
    r"\b(always|never|prefer|preferably|don't|dont|do not|please use|must|should|avoid|"
    r"make sure|instead of|from now on|i want|i like|i'd like)\b",
    re.IGNORECASE,
)
_BUILD_TEST = re.compile(
    r"(^|[\s;&|(/])("
    r"pytest|py\.test|tox|nox|unittest|"
    r"npm (run )?(test|build|lint)|npm ci|npm install|yarn( run)? (test|build)|pnpm( run)? (test|build)|"
    r"npx (jest|vitest|tsc)|jest|vitest|tsc|"
    r"cargo (test|build|check|clippy|run)|go (test|build|vet)|"
    r"make|cmake|ninja|mvn|gradle|\./gradlew|dotnet (test|build)|"
    r"uv (run|sync|pip|add|lock)|pip3? install|poetry (install|run)|"
    r"ruff|mypy|pyright|eslint|prettier"
    r")\b"
)
_ERROR_LINE = re.compile(r"error|Error|ERROR|Traceback|FAILED|Exception|panic:|fatal:")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_INJECTED_BLOCK = re.compile(
    r"<(environment_context|user_instructions|INSTRUCTIONS|skill)>.*?</\1>",
    re.DOTALL | re.IGNORECASE,
)
_MAX_SENTENCE = 300
_MAX_ERROR_LINES = 3
_MAX_BULLETS = 12

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


# --- phase 1 ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Command:
    index: int
    tool: str
    command: str
    exit_code: int | None
    failed: bool
    error_lines: tuple[str, ...]


def _command_text(call: TranscriptItem) -> str:
    """The command line of a tool call: Codex shell arguments, or the raw text."""
    text = call.text.strip()
    try:
        args = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return text.splitlines()[0] if text else ""
    if isinstance(args, dict):
        value = args.get("command", args.get("cmd", args.get("input")))
        if isinstance(value, list):
            parts = [str(part) for part in value]
            if len(parts) >= 3 and parts[1] in ("-lc", "-c") and parts[0].endswith("sh"):
                return parts[2]
            return shlex.join(parts)
        if isinstance(value, str):
            return value
    return text.splitlines()[0] if text else ""


_SEARCH = re.compile(r"^\s*(rg|grep|egrep|fgrep|git grep|ag)\b")
_RUNNING = re.compile(r"Process running with session ID (\d+)")
_EXEC_HEADER = re.compile(
    r"^(Chunk ID|Wall time|Process exited with code|Original token count|Output):", re.MULTILINE
)


def _output_body(text: str) -> str:
    """The output proper: Codex's ``exec_command`` results start with a small header."""
    if _EXEC_HEADER.match(text) and "\nOutput:\n" in f"\n{text}":
        return f"\n{text}".split("\nOutput:\n", 1)[1]
    return text


def _session_id(call: TranscriptItem) -> str | None:
    """The ``session_id`` a ``write_stdin``-style call polls, if any."""
    try:
        args = json.loads(call.text)
    except (json.JSONDecodeError, ValueError):
        return None
    if (
        isinstance(args, dict)
        and "session_id" in args
        and "cmd" not in args
        and "command" not in args
    ):
        return str(args["session_id"])
    return None


def _commands(items: Sequence[TranscriptItem]) -> list[_Command]:
    """Finished commands in order, each paired with its result.

    A command still running (Codex's ``exec_command`` answering "Process
    running with session ID n") is resolved by the later call that polls that
    session and sees it exit.
    """
    calls: dict[str, tuple[int, TranscriptItem]] = {}
    running: dict[str, tuple[int, TranscriptItem]] = {}
    commands: list[_Command] = []
    last_call: tuple[int, TranscriptItem] | None = None
    for index, item in enumerate(items):
        if item.kind is ItemKind.TOOL_CALL:
            last_call = (index, item)
            if item.call_id:
                calls[item.call_id] = (index, item)
            continue
        if item.kind is not ItemKind.TOOL_OUTPUT:
            continue
        found = calls.get(item.call_id) if item.call_id else last_call
        if found is None:
            continue
        polled = _session_id(found[1])
        if polled is not None:
            found = running.get(polled)
            if found is None:
                continue
        pending = _RUNNING.search(item.text)
        if pending and item.exit_code is None and not item.is_error:
            running[pending.group(1)] = found
            continue
        call_index, call = found
        command = _command_text(call)
        if not command:
            continue
        failed = item.is_error or (item.exit_code is not None and item.exit_code != 0)
        lines = [line for line in _output_body(item.text).splitlines() if line.strip()]
        if failed and item.exit_code == 1 and not lines and _SEARCH.match(command):
            continue  # grep and rg exit 1 when nothing matched: not a failure, not knowledge
        errors = tuple(_clip(line, 200) for line in lines if _ERROR_LINE.search(line))
        if failed and not errors and lines:
            errors = (_clip(lines[-1], 200),)  # e.g. "bash: pytest: command not found"
        commands.append(
            _Command(
                index=call_index,
                tool=call.tool or item.tool or "tool",
                command=_clip(command, 200),
                exit_code=item.exit_code,
                failed=failed,
                error_lines=tuple(dict.fromkeys(errors))[-_MAX_ERROR_LINES:] if failed else (),
            )
        )
    return commands


def _similar(a: str, b: str) -> bool:
    first_a, first_b = a.split()[:1], b.split()[:1]
    return first_a == first_b or SequenceMatcher(None, a, b).ratio() >= 0.6


def _user_text(item: TranscriptItem) -> str:
    return _INJECTED_BLOCK.sub(" ", item.text).strip()


def _directives(items: Sequence[TranscriptItem]) -> list[str]:
    found: list[str] = []
    for item in items:
        if item.kind is not ItemKind.USER:
            continue
        for sentence in _SENTENCE_SPLIT.split(_user_text(item)):
            sentence = sentence.strip(" -*\t")
            if sentence and _DIRECTIVE.search(sentence):
                found.append(_clip(sentence, _MAX_SENTENCE))
    return list(dict.fromkeys(found))[:_MAX_BULLETS]


def _task_line(first_message: str) -> str:
    """The first sentence of the first non-empty line of the user's first message."""
    line = next((line.strip() for line in first_message.splitlines() if line.strip()), "")
    sentence = _SENTENCE_SPLIT.split(line, maxsplit=1)[0] if line else ""
    return _clip(sentence or "unnamed task", 120)


def _slug(text: str) -> str | None:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words)[:60].strip("-") or None


@dataclass
class _Findings:
    directives: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    outcome: str = "uncertain"

    @property
    def empty(self) -> bool:
        return not (self.directives or self.knowledge or self.failures)


def _analyse(transcript: Transcript) -> _Findings:
    findings = _Findings(directives=_directives(transcript.items))
    commands = _commands(transcript.items)
    fixed: set[int] = set()
    for position, command in enumerate(commands):
        if command.failed:
            continue
        for earlier in commands[:position]:
            if (
                earlier.failed
                and earlier.index not in fixed
                and earlier.tool == command.tool
                and _similar(earlier.command, command.command)
            ):
                fixed.add(earlier.index)
                cause = f" ({earlier.error_lines[-1]})" if earlier.error_lines else ""
                findings.failures.append(
                    f"`{earlier.command}` failed{_exit(earlier)}{cause} -> `{command.command}` worked"
                )
                break
    for command in commands:
        if not command.failed and _BUILD_TEST.search(command.command):
            findings.knowledge.append(f"`{command.command}` passed ({command.tool})")
            findings.keywords.append(command.command.split()[0])
        elif command.failed and command.index not in fixed:
            errors = "; ".join(command.error_lines) or "no error line captured"
            findings.failures.append(f"`{command.command}` failed{_exit(command)}: {errors}")
        if command.failed or _BUILD_TEST.search(command.command):
            findings.references.append(f"`{command.command}`")
    findings.knowledge = list(dict.fromkeys(findings.knowledge))[:_MAX_BULLETS]
    findings.failures = list(dict.fromkeys(findings.failures))[:_MAX_BULLETS]
    findings.references = list(dict.fromkeys(findings.references))[:_MAX_BULLETS]
    findings.keywords = sorted(set(findings.keywords))
    findings.outcome = _outcome(commands, fixed)
    return findings


def _exit(command: _Command) -> str:
    return f" with exit {command.exit_code}" if command.exit_code is not None else ""


def _outcome(commands: list[_Command], fixed: set[int]) -> str:
    checks = [command for command in commands if _BUILD_TEST.search(command.command)]
    if checks:
        last = checks[-1]
        later_failures = any(
            command.failed and command.index > last.index and command.index not in fixed
            for command in commands
        )
        return "partial" if last.failed or later_failures else "success"
    unresolved = [command for command in commands if command.failed and command.index not in fixed]
    if unresolved:
        return "partial" if len(unresolved) < len(commands) else "fail"
    return "uncertain"


def _bullets(title: str, lines: Iterable[str]) -> list[str]:
    lines = list(lines)
    return [f"{title}:", *(f"- {line}" for line in lines), ""] if lines else []


def _raw_memory(transcript: Transcript, task: str, findings: _Findings) -> str:
    cwd = transcript.meta.cwd or ""
    group = cwd.rstrip("/").rsplit("/", 1)[-1] if cwd else "general"
    keywords = ", ".join([*findings.keywords, *([group] if group else [])])
    lines = [
        "---",
        f"description: heuristic notes from a session about: {task}",
        f"task: {task}",
        f"task_group: {group}",
        f"task_outcome: {findings.outcome}",
        f"cwd: {cwd}",
        f"keywords: {keywords}",
        "---",
        "",
        f"### Task 1: {task}",
        "",
        *_bullets("Preference signals", findings.directives),
        *_bullets("Reusable knowledge", findings.knowledge),
        *_bullets("Failures and how to do differently", findings.failures),
        *_bullets(
            "References",
            [f"session {transcript.meta.native_id}", *findings.references],
        ),
    ]
    return "\n".join(lines).rstrip() + "\n"


class HeuristicExtractor:
    """A deterministic heuristic extractor (not a language model); no network.

    See the module docstring for what it keeps. ``model`` is ``"heuristic"``
    and ``prompt_hash`` the SHA-256 of the rules' version string.
    """

    name = "heuristic"
    model = "heuristic"
    prompt_hash = _sha256(HEURISTIC_VERSION)

    def extract(self, transcript: Transcript) -> ExtractionAnswer:
        """Extract directives, working commands and failures; empty when there are none."""
        findings = _analyse(transcript)
        if findings.empty:
            output = StageOneOutput(rollout_summary="", rollout_slug=None, raw_memory="")
        else:
            first = next(
                (
                    _user_text(i)
                    for i in transcript.items
                    if i.kind is ItemKind.USER and _user_text(i)
                ),
                transcript.meta.first_user_message or "",
            )
            task = _task_line(first)
            summary = (
                f"The user asked: {_clip(first, 300)}\n"
                f"Outcome: {findings.outcome}. {len(findings.directives)} user directive(s), "
                f"{len(findings.knowledge)} passing build/test command(s), "
                f"{len(findings.failures)} failure note(s)."
            )
            output = StageOneOutput(
                rollout_summary=summary,
                rollout_slug=_slug(task),
                raw_memory=_raw_memory(transcript, task, findings),
            )
        return ExtractionAnswer(
            output=output,
            model=self.model,
            prompt_hash=self.prompt_hash,
            usage=TokenUsage(),
        )


# --- phase 2 ------------------------------------------------------------------------------

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
        elif stripped.endswith(":") and heading == "references":
            section = None
        elif section is not None and stripped[:2] in ("- ", "* "):
            text = stripped[2:].strip()
            if text and normalise(text) not in ("none", "n a"):
                bullets.append((section, text))
    return ParsedMemory(front_matter=front, bullets=tuple(bullets), task_titles=tuple(titles))


def _keywords(value: str) -> tuple[str, ...]:
    value = value.strip().strip("[]")
    words = (word.strip().strip("'\"") for word in value.split(","))
    return tuple(dict.fromkeys(word for word in words if word))


def _scope_tail(scope: str) -> str:
    return re.split(r"[/:]", scope.rstrip("/"))[-1] or scope


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
        task_group=front.get("task_group") or _scope_tail(entry.scope),
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
        tasks, facts = self._candidates(request)
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

        for session, candidate in sorted(tasks.items()):
            existing = by_session_task.get(session)
            if existing is None:
                edits.append(_edit("add", candidate))
                continue
            matched.add(existing.handle)
            if (
                normalise(existing.text) != normalise(candidate.text)
                or existing.title != candidate.title
                or set(existing.evidence) != candidate.evidence
            ):
                edits.append(_edit("revise", candidate, existing.handle))

        for key, candidate in sorted(facts.items()):
            existing = by_text.get(key[1])
            if existing is None:
                edits.append(_edit("add", candidate))
                continue
            matched.add(existing.handle)
            evidence = (set(existing.evidence) - removed) | candidate.evidence
            if evidence != set(existing.evidence):
                candidate.evidence = evidence
                if existing.scope == GLOBAL_SCOPE:
                    candidate.scopes = {GLOBAL_SCOPE}
                else:
                    candidate.scopes.add(existing.scope)
                candidate.reason = "evidence changed"
                edits.append(_edit("revise", candidate, existing.handle))

        edits.extend(self._notes(request, items, by_text, matched))
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
    ) -> tuple[dict[str, _Candidate], dict[tuple[str, str], _Candidate]]:
        tasks: dict[str, _Candidate] = {}
        facts: dict[tuple[str, str], _Candidate] = {}
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
                candidate = facts.get(key)
                if candidate is None:
                    facts[key] = _Candidate(
                        kind=kind,
                        text=text,
                        task_group=task.task_group,
                        title="",  # a bullet is its own title; only task records carry one
                        keywords=task.keywords,
                        evidence={entry.session_id},
                        scopes={entry.scope},
                        valid_from=entry.updated_at,
                        reason=f"{kind.value} from session {entry.session_id}",
                    )
                else:
                    candidate.evidence.add(entry.session_id)
                    candidate.scopes.add(entry.scope)
                    candidate.valid_from = _earliest(candidate.valid_from, entry.updated_at)
                    candidate.keywords = tuple(dict.fromkeys([*candidate.keywords, *task.keywords]))
                    if len(candidate.scopes) > 1:
                        candidate.task_group = ""
                        candidate.reason = f"{kind.value} seen in {len(candidate.scopes)} projects"
        return tasks, facts

    @staticmethod
    def _notes(
        request: ConsolidationRequest,
        items: list[ItemForModel],
        by_text: dict[str, ItemForModel],
        matched: set[str],
    ) -> list[Edit]:
        edits: list[Edit] = []
        for note in sorted(request.notes, key=lambda note: note.note_id):
            key = normalise(note.text)
            if not key:
                continue
            if note.intent == "remember" and key not in by_text:
                edits.append(
                    Edit(
                        op="add",
                        kind=ItemKindName.PREFERENCE,
                        scope=note.scope or GLOBAL_SCOPE,
                        task_group=""
                        if note.scope in ("", GLOBAL_SCOPE)
                        else _scope_tail(note.scope),
                        title="",
                        text=note.text.strip(),
                        reason=f"user note {note.note_id}",
                    )
                )
            elif note.intent == "forget":
                for item in items:
                    if len(key) >= 3 and key in normalise(item.text) and item.handle not in matched:
                        matched.add(item.handle)
                        edits.append(
                            _from_item(item, "retire", item.evidence, f"user note {note.note_id}")
                        )
        return edits


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
