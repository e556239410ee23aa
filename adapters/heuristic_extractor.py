"""An offline, deterministic stand-in for the phase-1 model (a heuristic, not a language model).

It runs without a network, gives the same answer for the same transcript
every time, and answers in the shape a model would: a ``StageOneOutput`` with
Codex's raw-memory layout (front matter, a ``### Task`` block, and the
sections ``Preference signals``, ``Reusable knowledge``, ``Failures and how
to do differently``, ``References``). Its judgement is shallow by design, and
its rules lean towards keeping too little rather than something false:

- preferences only from what the user typed: not from pasted blocks (code
  fences, quotes, logs, issue bodies, anything after "the issue says:"),
  assistant text, tool output or injected context (``<environment_context>``,
  served memory); only firm wording counts ("always", "never", "prefer",
  "use X, not Y", "don't use", "from now on", "I like"), not one-off task
  instructions ("make sure", "should", "don't stop until");
- "for all my projects", "in general", "I always", ... mark a preference as
  user-wide (the consolidator scopes it globally);
- only shell commands are commands: file writes and edits, searches, todo
  lists, subagent calls and MCP tools never are; trivial read-only commands
  (``ls``, ``cat``, ``grep``, ``git status``, ...) are never knowledge;
- build, test, lint, install and run commands that passed, written without
  the agent's tool name, so the same command from two agents is one fact; a
  command passed only when its output says so (``command_outcomes``: exit 0,
  or without an exit code no sandbox refusal, time-out, missing command,
  panic or failure summary), and it keeps the folder it ran in
  (``cd DIR && cmd``, DIR relative to the session's folder);
- failure -> fix pairs where the fix differs from the failing command: a
  different command, or the setup step (install, config) after which the
  same command passed; a failure fixed by simply running it again (after
  code edits) is not reusable and is left out;
- the procedure: every shell command that is neither trivial nor version
  control bookkeeping (``git ...``), in the order it ran, normalised (the
  folder it needs as one leading ``cd DIR &&``, none for the session's own
  folder; no output plumbing; the session's folder written as ``.``) with its
  outcome (``ok``, or ``failed`` with the exit code or why — timed out,
  sandbox denied — and the error line), so phase 2 can compare sessions and
  learn skills from them; a command still running in the background has no
  outcome and is left out;
- keywords from the commands, error names and files of the session;
- a rollout summary that says what was done: the requests, the commands
  that passed, the files changed, what was fixed, the outcome.

It answers with all fields empty when a session has nothing worth keeping.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import PurePosixPath
from typing import Any

from mnemolog.adapters.command_outcomes import judge_outcome, where_run
from mnemolog.domain.extraction import ExtractionAnswer, StageOneOutput, TokenUsage
from mnemolog.domain.transcript import ItemKind, Transcript, TranscriptItem
from mnemolog.domain.user_wide import USER_WIDE

__all__ = ["HEURISTIC_VERSION", "PROCEDURE_HEADING", "HeuristicExtractor", "is_trivial_command", "normalise_command", "procedure_command"]

HEURISTIC_VERSION = (
    "mnemolog-heuristic-v5: typed directives (user-wide marked), shell commands only, "
    "no trivial commands, fixes that differ from the failure, summaries of what was done, "
    "the procedure (shell commands in order with their outcome), "
    "outcomes from what the output says, commands with the folder they ran in, "
    "no patch, plan or todo tool run through a shell, no fact from one run of a single test"
)

# ------------------------------------------------------------------ preferences

_PREFERENCE = re.compile(
    r"\b(always|never|prefer|prefers|preferred|preferably|from now on|instead of|rather than)\b"
    r"|\b(?:don't|dont|do not)\s+(?:ever\s+)?(?:use|run|add|commit|push|call|install|write|mock|touch|edit|"
    r"introduce|rely|import)\b"
    r"|\buse\s+[^.;]{1,60}?(?:,\s*|\s+)not\s+\S"
    r"|\bi\s+(?:like|want|prefer|hate|dislike)\b|\bi'd\s+(?:like|rather)\b"
    r"|\bplease\s+(?:use|keep|write)\b",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(r"\b(don't|do not)\s+stop\b|\buntil\b.*\b(pass|done|green)\b", re.IGNORECASE)

_IMPERATIVE = re.compile(
    r"\b(use|run|answer|reply|write|keep|avoid|commit|format|add|put|sign|name|tag|open|ask|explain)\b", re.IGNORECASE
)
_TAG_BLOCK = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^>]*)?>.*?</\1>", re.DOTALL)
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LOG_LINE = re.compile(
    r"^\s*(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)\]?[\s:]|"
    r"at\s+\S+\(|File \"|Traceback|\$ |>>> )"
    r"|\bretrying\s+\d+/\d+|\bexit (?:code|status) \d+",
    re.IGNORECASE,
)
_ISSUE_BODY = re.compile(
    r"^\s*#{1,6}\s|steps to reproduce|expected behaviou?r|actual behaviou?r|\bdescribe the bug\b",
    re.IGNORECASE | re.MULTILINE,
)
_PASTE_INTRO = re.compile(
    r"\b(issue|log|logs|error|errors|output|says|said|report|pasted|trace|stack|message|ticket|comment)\b[^:\n]*:\s*$",
    re.IGNORECASE,
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_MAX_SENTENCE = 300
_MAX_PARAGRAPH = 600
_MAX_BULLETS = 12


def _typed_paragraphs(text: str) -> list[str]:
    """The parts of a user message the user typed: injected tags, fences, quotes, logs and pastes cut out."""
    text = _FENCE.sub("\n\n", _TAG_BLOCK.sub("\n\n", text))
    kept: list[str] = []
    pasted = False
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line for line in paragraph.splitlines() if line.strip()]
        if not lines or pasted:
            continue
        looks_pasted = (
            len(lines) >= 4
            or len(paragraph) > _MAX_PARAGRAPH
            or any(line.lstrip().startswith(">") or "[item:" in line for line in lines)
            or any(_LOG_LINE.search(line) for line in lines)
            or bool(_ISSUE_BODY.search(paragraph))
        )
        if looks_pasted:
            continue
        for index, line in enumerate(lines):
            if _PASTE_INTRO.search(line):
                # "The issue says:" — what follows is someone else's text.
                kept.extend(lines[: index + 1][:-1])
                pasted = True
                break
        else:
            kept.append("\n".join(lines))
    return kept


def _directives(items: Sequence[TranscriptItem]) -> list[str]:
    found: list[str] = []
    for item in items:
        if item.kind is not ItemKind.USER:
            continue
        for paragraph in _typed_paragraphs(item.text):
            for sentence in _SENTENCE_SPLIT.split(paragraph):
                sentence = sentence.strip(" -*\t")
                firm = _PREFERENCE.search(sentence) or (USER_WIDE.search(sentence) and _IMPERATIVE.search(sentence))
                if sentence and not sentence.endswith("?") and firm and not _ONE_OFF.search(sentence):
                    found.append(_clip(sentence, _MAX_SENTENCE))
    return list(dict.fromkeys(found))[:_MAX_BULLETS]


# ------------------------------------------------------------------ commands

_SHELL_TOOLS = frozenset(
    {"shell", "exec_command", "local_shell", "bash", "Bash", "shell_command", "container.exec", "run_command"}
)
_NOT_COMMANDS = frozenset(
    {
        "Write", "Edit", "MultiEdit", "Read", "Glob", "Grep", "LS", "TodoWrite", "TodoRead", "Task", "Agent",
        "WebSearch", "WebFetch", "NotebookEdit", "NotebookRead", "ExitPlanMode", "AskUserQuestion", "BashOutput",
        "KillShell", "KillBash", "apply_patch", "update_plan", "view_image", "web_search", "write_stdin", "Skill",
    }
)
# The same bookkeeping run through a shell (Codex ran ``apply_patch`` as a command; models call ``update_plan``
# or a todo tool through bash, where it is "command not found"): never a command of the project.
_BOOKKEEPING_PROGRAMS = frozenset({t.lower() for t in _NOT_COMMANDS} | {"applypatch", "todo_write", "todo_read", "todowrite"})
_FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# One run of a single test (a node id, a name filter): a step of the work, not a fact of the project.
_SINGLE_TEST = re.compile(
    r"\S::\S|\s-k[\s=]|\s(-t|--testNamePattern|--grep)[\s=]|\s-run[\s=]|\s--filter[\s=]|\s--\s+--exact\b"
)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_BUILD_TEST = re.compile(
    r"(^|[\s;&|(/])("
    r"pytest|py\.test|tox|nox|unittest|python3? -m (pytest|unittest|mypy|ruff|pip install)|"
    r"npm (run \S+|test|ci|install|i)|yarn( run)? \S+|pnpm( run)? \S+|bun (run |test|install)|"
    r"npx (jest|vitest|tsc|eslint|prettier|playwright)|jest|vitest|tsc|"
    r"cargo (test|build|check|clippy|run|fmt|nextest)|go (test|build|vet|run|mod)|"
    r"make|just|cmake|ninja|mvn|gradle|\./gradlew|dotnet (test|build|run)|bundle (exec|install)|rake|"
    r"uv (run|sync|pip|add|lock)|pip3? install|poetry (install|run)|pdm (install|run)|"
    r"ruff|mypy|pyright|eslint|prettier|black|isort|docker compose|docker-compose|"
    r"alembic|\./manage\.py|python3? manage\.py|flask|uvicorn|mix (test|compile|deps\.get)|"
    r"phpunit|composer (install|test)|swift (test|build)|deno (test|task)|"
    r"terraform (init|plan|validate|fmt|apply)|tflint|helm (lint|template)|mkdocs (build|serve)|"
    r"flutter (test|build)|dart test|bazel (test|build)"
    r")\b"
)
_SETUP = re.compile(
    r"^(pip3? install|uv (sync|pip install|add)|python3? -m pip install|poetry install|pdm install|"
    r"npm (install|ci|i)\b|pnpm (install|i)\b|yarn( install)?$|bun install|bundle install|go mod (download|tidy)|"
    r"cargo fetch|apt(-get)? install|brew install|export \w+=|source \S+|\. \S+activate|"
    r"make (setup|install|deps|bootstrap)|just (setup|install|deps|bootstrap)|docker compose up|"
    r"docker-compose up|cp \S*\.env\S* |createdb |git submodule update|mix deps\.get|composer install|"
    r"alembic upgrade|corepack enable|nvm use|rustup |terraform init)"
)
_MISSING = re.compile(
    r"No rule to make target|command not found|not found|Unknown (command|script|task)|Missing script|"
    r"no such (command|task|script)|is not recognized|has been removed|deprecated",
    re.IGNORECASE,
)
_TRIVIAL = frozenset(
    {
        "ls", "ll", "cat", "head", "tail", "pwd", "cd", "echo", "printf", "grep", "egrep", "fgrep", "rg", "ag",
        "find", "fd", "which", "whereis", "type", "wc", "tree", "file", "stat", "du", "df", "env", "printenv",
        "whoami", "date", "less", "more", "nl", "sort", "uniq", "cut", "diff", "basename", "dirname",
        "realpath", "readlink", "true", "false", "sleep", "clear", "history", "man", "open", "code", "jq",
        "awk", "sed", "xxd", "hexdump", "od", "lsof", "ps", "top", "uname", "hostname", "id", "mkdir",
        "touch", "test", "[",
    }
)
_TRIVIAL_GIT = re.compile(r"^git\s+(status|log|diff|show|branch|remote|rev-parse|ls-files|blame|config --get|stash list)\b")
_ERROR_LINE = re.compile(
    r"error|Error|ERROR|Traceback|FAILED|Exception|panic:|fatal:|No rule to make target|command not found|"
    r"No such file|not found|ERR!|Missing script|Unknown (command|script)|denied|panicked|timed out"
)
_ERROR_NAME = re.compile(r"\b([A-Z][A-Za-z]+(?:Error|Exception))\b")
_RUNNING = re.compile(r"Process running with session ID (\d+)")
_EXEC_HEADER = re.compile(
    r"^(Chunk ID|Wall time|Process exited with code|Original token count|Output):", re.MULTILINE
)
_SEARCH = re.compile(r"^\s*(rg|grep|egrep|fgrep|git grep|ag)\b")
_MAX_ERROR_LINES = 3


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def normalise_command(command: str, cwd: str | None = None, workdir: str | None = None) -> str:
    """A command line as memory states it: one line, no output plumbing, and the folder it needs.

    Leading ``cd DIR &&`` steps and the tool's ``workdir`` become one
    ``cd DIR && `` (relative to the session's folder ``cwd``); none when the
    command ran in the session's folder itself.
    """
    text = where_run(" ".join(command.split()), cwd, workdir)
    text = re.sub(r"\s*\|\s*(tail|head|tee|less|cat)(\s+-?[\w=.-]+)*\s*$", "", text)
    text = re.sub(r"\s*2>&1\s*$", "", text)
    text = re.sub(r"\s*;\s*echo\s+\S*\$\?\S*\s*$", "", text)
    return text.strip()


_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


def _segments(command: str) -> list[str]:
    """The simple commands of a command line (quoted text kept out of the split)."""
    return [part.strip() for part in re.split(r"&&|\|\||;|\|", _QUOTED.sub("''", command)) if part.strip()]


def is_trivial_command(command: str) -> bool:
    """A read-only look around (``ls``, ``cat``, ``grep``, ``git status``, ...): never knowledge."""
    segments = _segments(command)
    if not segments:
        return True
    for segment in segments:
        words = [w for w in segment.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
        if not words:
            continue
        if words[0] in _TRIVIAL or _TRIVIAL_GIT.match(" ".join(words)):
            continue
        return False
    return True


@dataclass(frozen=True)
class _Command:
    index: int
    command: str
    exit_code: int | None
    failed: bool
    error_lines: tuple[str, ...]
    reason: str = ""  # why it failed ("timed out", "sandbox denied", "exit 2", ...)

    @property
    def trivial(self) -> bool:
        return is_trivial_command(self.command)

    @property
    def error(self) -> str:
        return self.error_lines[-1] if self.error_lines else ""


def _args(call: TranscriptItem) -> Any:
    try:
        return json.loads(call.text)
    except (json.JSONDecodeError, ValueError):
        return None


def _command_text(call: TranscriptItem) -> str | None:
    """The command line of a shell tool call; None for every other tool (files, searches, todos, MCP) and for that bookkeeping run through a shell."""
    command = _shell_command(call)
    return None if command is None or _program(command) in _BOOKKEEPING_PROGRAMS else command


def _program(command: str) -> str:
    """The program a command line runs, past its ``cd DIR &&`` steps and ``NAME=value`` assignments (lower case)."""
    for step in re.split(r"&&|;|\n", command):
        words = step.strip().split()
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
            words = words[1:]
        if words and words[0] != "cd":
            return words[0].lower()
    return ""


def _shell_command(call: TranscriptItem) -> str | None:
    tool = call.tool or ""
    if tool in _NOT_COMMANDS or tool.startswith("mcp__"):
        return None
    args = _args(call)
    value = args.get("command", args.get("cmd")) if isinstance(args, dict) else None
    if isinstance(value, list):
        parts = [str(part) for part in value]
        if len(parts) >= 3 and parts[1] in ("-lc", "-c") and parts[0].endswith("sh"):
            return parts[2]
        return shlex.join(parts)
    if isinstance(value, str):
        return value
    if tool in _SHELL_TOOLS and args is None and call.text.strip():
        return call.text.strip().splitlines()[0]  # a local shell call recorded as its command line
    return None


def _workdir(call: TranscriptItem) -> str | None:
    """The folder a shell call asked to run in (Codex's ``workdir``), if any."""
    args = _args(call)
    value = args.get("workdir") if isinstance(args, dict) else None
    return value if isinstance(value, str) and value.startswith("/") else None


_BACKGROUND = re.compile(r"^Command running in background with ID: ")


def _changed_files(items: Sequence[TranscriptItem]) -> list[str]:
    """Files the session wrote or edited (Claude Code's file tools, Codex's apply_patch)."""
    found: list[str] = []
    for item in items:
        if item.kind is not ItemKind.TOOL_CALL:
            continue
        if item.tool in _FILE_TOOLS:
            args = _args(item)
            path = args.get("file_path") or args.get("notebook_path") if isinstance(args, dict) else None
            if isinstance(path, str):
                found.append(path)
        elif item.tool == "apply_patch" or "*** Begin Patch" in item.text:
            found.extend(match.strip() for match in _PATCH_FILE.findall(item.text))
    return list(dict.fromkeys(found))


def _output_body(text: str) -> str:
    """The output proper: Codex's ``exec_command`` results start with a small header."""
    if _EXEC_HEADER.match(text) and "\nOutput:\n" in f"\n{text}":
        return f"\n{text}".split("\nOutput:\n", 1)[1]
    return text


def _session_id(call: TranscriptItem) -> str | None:
    """The ``session_id`` a ``write_stdin``-style call polls, if any."""
    args = _args(call)
    if isinstance(args, dict) and "session_id" in args and "cmd" not in args and "command" not in args:
        return str(args["session_id"])
    return None


def _commands(items: Sequence[TranscriptItem], cwd: str | None = None) -> list[_Command]:
    """Finished shell commands in order, each paired with its result.

    A command still running (Codex's ``exec_command`` answering "Process
    running with session ID n") is resolved by the later call that polls that
    session and sees it exit. One started in the background (Claude Code's
    "Command running in background with ID") has no outcome yet and is left out.
    Whether a command failed is what its output says
    (``command_outcomes.judge_outcome``); each keeps the folder it ran in.
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
        if _BACKGROUND.match(item.text) and not item.is_error:
            continue
        call_index, call = found
        raw = _command_text(call)
        command = normalise_command(raw, cwd, _workdir(call)) if raw else ""
        if not command or raw is None:
            continue
        body = _output_body(item.text)
        outcome = judge_outcome(body, exit_code=item.exit_code, is_error=item.is_error, command=raw)
        failed = outcome.failed
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        lines = [line for line in lines if not re.match(r"^Exit code -?\d+$", line)]
        if failed and outcome.exit_code == 1 and not lines and _SEARCH.match(command):
            continue  # grep and rg exit 1 when nothing matched: not a failure, not knowledge
        errors = tuple(_clip(line, 160) for line in lines if _ERROR_LINE.search(line))
        if failed and not errors and lines:
            errors = (_clip(lines[-1], 160),)  # e.g. "bash: pytest: command not found"
        commands.append(
            _Command(
                index=call_index,
                command=_clip(command, 200),
                exit_code=outcome.exit_code,
                failed=failed,
                reason=outcome.reason,
                error_lines=tuple(dict.fromkeys(errors))[-_MAX_ERROR_LINES:] if failed else (),
            )
        )
    return commands


def _bare(command: str) -> str:
    """The command without the ``cd DIR && `` that says where it ran (for comparing what it does)."""
    return re.sub(r"^cd \S+ && ", "", command)


def _similar(a: str, b: str) -> bool:
    a, b = _bare(a), _bare(b)
    first_a, first_b = a.split()[:1], b.split()[:1]
    return first_a == first_b or SequenceMatcher(None, a, b).ratio() >= 0.6


def _code(text: str) -> str:
    """``text`` as a code span (error lines keep their ``make: ***`` and friends verbatim)."""
    return f"`{text}`" if "`" not in text else text


@dataclass(frozen=True)
class _Fix:
    failure: _Command
    text: str


def _fix_for(position: int, commands: Sequence[_Command]) -> _Fix | str | None:
    """How a failed command was fixed: a different command, or a setup step before the same one.

    ``"rerun"`` when the same command simply passed later (fixed by editing
    code: not reusable); None when nothing fixed it.
    """
    failure = commands[position]
    cause = f" ({_code(failure.error)})" if failure.error else ""
    head = f"`{failure.command}` failed{_exit(failure)}{cause} -> "
    setup: list[_Command] = []
    missing = bool(_MISSING.search(" ".join(failure.error_lines)))
    for offset, later in enumerate(commands[position + 1 :], start=1):
        if later.failed or later.trivial:
            continue
        if later.command == failure.command:
            if setup:
                return _Fix(failure, head + f"run `{setup[-1].command}` first, then `{failure.command}` works")
            return "rerun"
        if _SETUP.search(_bare(later.command)):
            setup.append(later)
            continue
        if _similar(later.command, failure.command) or (missing and offset <= 3 and _BUILD_TEST.search(later.command)):
            return _Fix(failure, head + f"`{later.command}` worked")
    return None


def _exit(command: _Command) -> str:
    return f" with exit {command.exit_code}" if command.exit_code is not None else ""


# ------------------------------------------------------------------ findings


# ------------------------------------------------------------------ the procedure

PROCEDURE_HEADING = "Procedure"
_MAX_PROCEDURE_STEPS = 30
_VCS = re.compile(r"^(git|gh|hg|svn|jj)\b")


def procedure_command(command: str, cwd: str | None) -> str:
    """A command as procedures compare it: normalised, the session's own folder written as ``.``."""
    text = normalise_command(command)
    folder = (cwd or "").rstrip("/")
    if len(folder) > 1:
        text = text.replace(folder + "/", "").replace(folder, ".")
    return text.strip()


def _procedure(commands: Sequence[_Command], cwd: str | None) -> list[str]:
    """The procedure lines: each real command in order, with ``ok`` or how it failed."""
    lines: list[str] = []
    for command in commands:
        text = procedure_command(command.command, cwd)
        if not text or "`" in text or command.trivial or _VCS.match(text):
            continue
        if not command.failed:
            outcome = "ok"
        else:
            detail = f"exit {command.exit_code}" if command.exit_code is not None else (command.reason or "error")
            outcome = f"failed ({detail}: {command.error})" if command.error else f"failed ({detail})"
        line = f"`{text}` -> {outcome}"
        if not lines or lines[-1] != line:  # the same command run again with the same outcome is one step
            lines.append(line)
    return lines[:_MAX_PROCEDURE_STEPS]


@dataclass
class _Findings:
    directives: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    procedure: list[str] = field(default_factory=list)
    outcome: str = "uncertain"

    @property
    def empty(self) -> bool:
        steps_ok = sum(1 for line in self.procedure if line.endswith("-> ok"))
        return not (self.directives or self.knowledge or self.failures or steps_ok >= 2)


def _analyse(transcript: Transcript) -> _Findings:
    findings = _Findings(directives=_directives(transcript.items))
    commands = [c for c in _commands(transcript.items, transcript.meta.cwd)]
    resolved: set[int] = set()
    for position, command in enumerate(commands):
        if not command.failed or command.trivial or command.index in resolved:
            continue
        fix = _fix_for(position, commands)
        if fix is not None:
            # later failures of the same command are the same story
            resolved.update(c.index for c in commands[position:] if c.failed and c.command == command.command)
        if isinstance(fix, _Fix):
            findings.failures.append(fix.text)
            findings.fixed.append(fix.text)
        elif fix is None:
            errors = "; ".join(_code(e) for e in command.error_lines) or "no error line captured"
            findings.failures.append(f"`{command.command}` failed{_exit(command)}: {errors}")
            findings.unresolved.append(command.command)
    for command in commands:
        if command.trivial:
            continue
        if not command.failed and _BUILD_TEST.search(command.command) and not _SINGLE_TEST.search(command.command):
            findings.knowledge.append(f"`{command.command}` passed")
            findings.passed.append(command.command)
        if command.failed or _BUILD_TEST.search(command.command):
            findings.references.append(f"`{command.command}`")
    findings.files = _changed_files(transcript.items)
    findings.procedure = _procedure(commands, transcript.meta.cwd)
    findings.knowledge = list(dict.fromkeys(findings.knowledge))[:_MAX_BULLETS]
    findings.failures = list(dict.fromkeys(findings.failures))[:_MAX_BULLETS]
    findings.passed = list(dict.fromkeys(findings.passed))
    findings.references = list(dict.fromkeys(findings.references))[:_MAX_BULLETS]
    findings.keywords = _keywords(commands, findings)
    findings.outcome = _outcome(commands, resolved)
    return findings


_KEYWORD = re.compile(r"^[A-Za-z][\w.+-]{1,40}$")
_NOT_KEYWORDS = frozenset(
    {
        "cd", "sudo", "env", "bash", "sh", "zsh", "general", "run", "exec", "npx", "python", "python3", "test",
        "tests", "init", "install", "check", "lint", "format", "build", "rm", "cp", "mv", "chmod", "git", "add",
        "commit", "the", "and", "not", "use", "this", "that", "repo",
    }
)


def _keywords(commands: Sequence[_Command], findings: _Findings) -> list[str]:
    """Searchable handles from the session's own content: tools run, error names, files changed."""
    words: list[str] = []
    for command in commands:
        if command.trivial:
            continue
        for segment in _segments(command.command)[:2]:
            if is_trivial_command(segment):
                continue
            parts = [w for w in segment.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
            words.extend(parts[:1])
            if len(parts) > 1 and parts[0] in {"npm", "pnpm", "yarn", "uv", "cargo", "go", "make", "just", "poetry", "python", "python3"}:
                words.extend(p for p in parts[1:3] if not p.startswith("-"))
        words.extend(_ERROR_NAME.findall(" ".join(command.error_lines)))
    for directive in findings.directives:
        words.extend(re.findall(r"`([^`\s]+)`", directive))
        words.extend(re.findall(r"\b(?:use|prefer)\s+([A-Za-z][\w.+-]+)", directive, re.IGNORECASE))
    words.extend(PurePosixPath(path).name for path in findings.files)
    kept = [w for w in words if _KEYWORD.match(w) and w.lower() not in _NOT_KEYWORDS and w not in ("m", "run")]
    return list(dict.fromkeys(kept))[:10]


def _outcome(commands: list[_Command], resolved: set[int]) -> str:
    real = [command for command in commands if not command.trivial]
    checks = [command for command in real if _BUILD_TEST.search(command.command)]
    if checks:
        last = checks[-1]
        later_failures = any(
            command.failed and command.index > last.index and command.index not in resolved for command in real
        )
        return "partial" if last.failed or later_failures else "success"
    unresolved = [command for command in real if command.failed and command.index not in resolved]
    if unresolved:
        return "partial" if len(unresolved) < len(real) else "fail"
    return "uncertain"


# ------------------------------------------------------------------ the answer


def _requests(transcript: Transcript) -> list[str]:
    """What the user asked, in order: the first typed sentence of each message."""
    asked: list[str] = []
    for item in transcript.items:
        if item.kind is not ItemKind.USER:
            continue
        paragraphs = _typed_paragraphs(item.text)
        if paragraphs:
            asked.append(_clip(paragraphs[0], 200))
    if not asked and transcript.meta.first_user_message:
        asked.append(_clip(_TAG_BLOCK.sub(" ", transcript.meta.first_user_message), 200))
    return list(dict.fromkeys(asked))


def _task_line(first_message: str, directives: Sequence[str] = ()) -> str:
    """The first sentence of the user's first message that asks for work (not one stating a preference)."""
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(first_message) if s.strip()]
    stated = {" ".join(d.split()) for d in directives}
    asks = [s for s in sentences if " ".join(s.split()) not in stated]
    return _clip((asks or sentences or ["unnamed task"])[0], 120)


def _slug(text: str) -> str | None:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words)[:60].strip("-") or None


def _summary(requests: Sequence[str], findings: _Findings) -> str:
    """What the session did, in a few lines: requests, commands that passed, files, fixes, outcome."""
    lines = [f"The user asked: {requests[0] if requests else 'unknown'}"]
    if len(requests) > 1:
        lines.append("Then: " + "; ".join(requests[1:4]))
    if findings.passed:
        lines.append("Commands that passed: " + ", ".join(f"`{c}`" for c in findings.passed[:6]))
    if findings.files:
        names = [PurePosixPath(path).name for path in findings.files]
        lines.append("Files changed: " + ", ".join(list(dict.fromkeys(names))[:8]))
    for fix in findings.fixed[:3]:
        lines.append(f"Fixed: {fix}")
    if findings.unresolved:
        lines.append("Still failing: " + ", ".join(f"`{c}`" for c in findings.unresolved[:3]))
    if findings.directives:
        lines.append("The user said: " + " ".join(findings.directives[:2]))
    lines.append(f"Outcome: {findings.outcome}.")
    return "\n".join(lines)


def _bullets(title: str, lines: Iterable[str]) -> list[str]:
    lines = list(lines)
    return [f"{title}:", *(f"- {line}" for line in lines), ""] if lines else []


def _raw_memory(transcript: Transcript, task: str, findings: _Findings) -> str:
    cwd = (transcript.meta.cwd or "").strip()
    group = cwd.rstrip("/").rsplit("/", 1)[-1] if cwd else ""
    keywords = ", ".join(dict.fromkeys([*findings.keywords, *([group] if group else [])]))
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
        *_bullets(PROCEDURE_HEADING, findings.procedure),
        *_bullets("References", [f"session {transcript.meta.native_id}", *findings.references]),
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
        """Extract typed preferences, working commands, fixes and failures; empty when there are none."""
        findings = _analyse(transcript)
        if findings.empty:
            output = StageOneOutput(rollout_summary="", rollout_slug=None, raw_memory="")
        else:
            requests = _requests(transcript)
            task = _task_line(requests[0] if requests else "", findings.directives)
            output = StageOneOutput(
                rollout_summary=_summary(requests, findings),
                rollout_slug=_slug(task),
                raw_memory=_raw_memory(transcript, task, findings),
            )
        return ExtractionAnswer(output=output, model=self.model, prompt_hash=self.prompt_hash, usage=TokenUsage())
