"""Whether a shell command passed, read from what its output says, and the folder it ran in.

A command passed only when its output says so. A structured exit code (Codex's
``Process exited with code N`` / ``Exit code: N`` headers and JSON metadata,
Claude Code's ``Exit code N`` with ``is_error``) is the answer, except when a
pipe or ``|| true`` hides the command's own status (``cargo test | tail`` exits
with tail's). Without one, or behind such a mask, the output's words decide:
the sandbox's refusals (mid-2025 Codex wrote ``failed in sandbox LinuxSeccomp
with execution error: … exit code: 101 …`` or ``… command timed out`` as a
plain string instead of the command's output), time-outs, a missing command,
a panic, a test runner's failure summary, ``npm ERR!``. Words that only look
like failure ("0 errors", "0 failed") are not.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

__all__ = ["Outcome", "failure_in", "judge_outcome", "sandbox_failure", "status_masked", "where_run"]

_SANDBOX = re.compile(r"^\s*failed in sandbox\b|\bsandbox denied\b|\bexecution error:", re.IGNORECASE | re.MULTILINE)
_TIMED_OUT = re.compile(r"\bcommand timed out\b|\btimed out after \d", re.IGNORECASE)
_EXIT_WORDS = re.compile(r"\b(?:exit code|exit status|process exited with code)\s*:?\s*(-?\d{1,10})\b", re.IGNORECASE)
_FAILURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("command not found", re.compile(r"command not found|^\S*sh: \d+: \S+: not found$|is not recognized as an internal or external command", re.MULTILINE)),
    ("panicked", re.compile(r"\bthread '[^'\n]*' panicked at\b|^panic: ", re.MULTILINE)),
    ("tests failed", re.compile(
        r"test result: FAILED|^FAILED\s+\S|^FAIL\s+\S|^--- FAIL:|\b[1-9]\d* (?:failed|failing)\b|"
        r"^error: test failed\b|^error: could not compile\b|^error(?:\[E\d+\])?: |^make: \*\*\* .*Error \d+",
        re.MULTILINE,
    )),
    ("npm error", re.compile(r"^npm (?:ERR!|error) |\bERR_PNPM_\w+", re.MULTILINE)),
)
_PIPE = re.compile(r"(?<![|>&])\|(?![|&])")
_OR_TRUE = re.compile(r"\|\|\s*(?:true|:|exit 0)\b|;\s*(?:true|exit 0)\s*$")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


@dataclass(frozen=True)
class Outcome:
    """How one finished command ended: ``failed``, its exit code when known, and why (empty when it passed)."""

    failed: bool
    exit_code: int | None = None
    reason: str = ""


def sandbox_failure(text: str) -> tuple[int | None, str] | None:
    """``(exit code or None, reason)`` when ``text`` is a sandbox's refusal or time-out in place of output, else None."""
    head = text[:4000]
    if not _SANDBOX.search(head) and not re.match(r"^\s*command timed out\b", head, re.IGNORECASE):
        return None
    found = _EXIT_WORDS.search(head)
    code = int(found.group(1)) if found else None
    if _TIMED_OUT.search(head):
        return code, "timed out"
    return code, "sandbox denied" if re.search(r"sandbox denied|denied", head, re.IGNORECASE) else "sandbox error"


def failure_in(text: str) -> str | None:
    """The reason ``text`` shows a failure (a sandbox refusal, a time-out, a non-zero exit, ...), or None."""
    sandbox = sandbox_failure(text)
    if sandbox is not None:
        return sandbox[1]
    if _TIMED_OUT.search(text):
        return "timed out"
    for found in _EXIT_WORDS.finditer(text):
        if int(found.group(1)) != 0:
            return f"exit {found.group(1)}"
    for reason, pattern in _FAILURES:
        if pattern.search(text):
            return reason
    return None


def status_masked(command: str) -> bool:
    """Whether the command line's exit status is not its command's own (a pipe, ``|| true``)."""
    bare = _QUOTED.sub("''", command)
    return bool(_PIPE.search(bare) or _OR_TRUE.search(bare))


def judge_outcome(output: str, *, exit_code: int | None, is_error: bool, command: str = "") -> Outcome:
    """Whether a command failed: its structured status when it has one, else what its output says."""
    if is_error or (exit_code is not None and exit_code != 0):
        return Outcome(True, exit_code, failure_in(output) or (f"exit {exit_code}" if exit_code is not None else "error"))
    if exit_code == 0 and not status_masked(command):
        return Outcome(False, 0)
    reason = failure_in(output)
    if reason is None:
        return Outcome(False, exit_code)
    found = _EXIT_WORDS.search(output)
    code = int(found.group(1)) if found and int(found.group(1)) != 0 else None
    return Outcome(True, code, reason)


_CD = re.compile(r"^cd\s+(\"[^\"]+\"|'[^']+'|\S+)\s*(?:&&|;)\s*")


def where_run(command: str, cwd: str | None, workdir: str | None = None) -> str:
    """``command`` with the folder it needs as one leading ``cd DIR && `` (none when that is the session's folder).

    Leading ``cd`` steps and a tool's ``workdir`` are resolved against the
    session's folder; a folder inside it is written relative to it.
    """
    folder = (cwd or "").rstrip("/") or None
    here = workdir.rstrip("/") if workdir else folder
    text = command.strip()
    while True:
        found = _CD.match(text)
        if not found:
            break
        target = found.group(1).strip("'\"")
        if target.startswith(("~", "$", "-")):
            break  # a folder only the shell can resolve: keep the cd as written
        here = posixpath.normpath(posixpath.join(here or ".", target))
        text = text[found.end() :]
    if not here or here in (folder, "."):
        return text
    if folder and here.startswith(folder + "/"):
        here = here[len(folder) + 1 :]
    return f"cd {here} && {text}"
