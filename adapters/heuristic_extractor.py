"""An offline, deterministic stand-in for the phase-1 model (a heuristic, not a language model).

It runs without a network, gives the same answer for the same transcript
every time, and answers in the shape a model would: a ``StageOneOutput`` with
Codex's raw-memory layout (front matter, a ``### Task`` block, and the
sections ``Preference signals``, ``Reusable knowledge``, ``Failures and how
to do differently``, ``References``). Its judgement is shallow by design.

``HeuristicExtractor`` keeps

- explicit user directives and preferences (sentences with always, never,
  prefer, don't, do not, please use, must, should, avoid, ...);
- commands that succeeded after a similar command failed (same tool, similar
  command line, non-zero exit then zero);
- build and test commands that passed (pytest, npm test, cargo test, go test,
  make, uv, pip install, ...);
- failing commands with their error lines;

and answers with all fields empty when a session has none of these.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from mnemolog.domain.extraction import ExtractionAnswer, StageOneOutput, TokenUsage
from mnemolog.domain.transcript import ItemKind, Transcript, TranscriptItem

__all__ = ["HEURISTIC_VERSION", "HeuristicExtractor"]

HEURISTIC_VERSION = (
    "mnemolog-heuristic-v1: directives, fixed-after-failure, passing build/test, failures"
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


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"



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
