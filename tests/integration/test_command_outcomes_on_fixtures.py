"""On every real session of ../shared/fixtures, memory never says a failing command passed.

Each fixture file goes through the README's pipeline (``mnemolog run --all
FILE``, offline, in a fresh ``MNEMOLOG_HOME``). The test reads the session
file itself, independently of mnemolog's readers: each shell call paired with
its result, and whether that result shows a failure (a non-zero exit code,
``is_error``, a sandbox denial, a time-out, a missing command, a panic, a
test-failure summary). Then it reads every file of the rendered memory folder:
no ``X passed`` and no ``X -> ok`` for a command whose every run failed, and a
command run with ``cd DIR &&`` (DIR not the session's folder) keeps DIR.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.cli import run_cli
from support.shared_fixtures import shared_fixture

FIXTURES = [
    "codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    "codex-rollouts/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    "codex-rollouts/rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl",
    "codex-rollouts/codemie-session-turn-2.jsonl",
    "claude-code/sample_main_transcript.jsonl",
    "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "claude-code/transcript.jsonl",
    "claude-code/agent-a2898e3.jsonl",
    "claude-code/tool_heavy.jsonl",
]

_FAILURE = re.compile(
    r"failed in sandbox|sandbox denied|timed out|command not found|panicked at|test result: FAILED|^FAILED |"
    r"\b[1-9]\d* failed\b|error: test failed|npm ERR!|^(?:Exit code:?|Process exited with code) [1-9]|exit code: [1-9]",
    re.MULTILINE | re.IGNORECASE,
)
_REMEMBERED = re.compile(r"`([^`]+)` (?:passed|-> ok)\b")


@dataclass
class _Run:
    command: str
    failed: bool


def _command_of(arguments: Any) -> str | None:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    value = arguments.get("cmd", arguments.get("command"))
    if isinstance(value, list) and len(value) >= 3 and value[1] in ("-lc", "-c"):
        return str(value[2])
    return value if isinstance(value, str) else None


def _output_failed(output: Any) -> bool:
    text = output if isinstance(output, str) else json.dumps(output)
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and isinstance(decoded.get("metadata"), dict):
        if decoded["metadata"].get("exit_code") not in (0, None):
            return True
        text = str(decoded.get("output", ""))
    return bool(_FAILURE.search(text))


def _runs(path: Path) -> tuple[list[_Run], str | None]:
    """The shell commands of a session file with whether each run failed, and the session's folder."""
    calls: dict[str, str] = {}
    runs: list[_Run] = []
    cwd: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else record
        cwd = cwd or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
        if payload.get("type") == "function_call" and payload.get("name") != "write_stdin":
            command = _command_of(payload.get("arguments"))
            if command:
                calls[str(payload.get("call_id"))] = command
        elif payload.get("type") == "function_call_output" and str(payload.get("call_id")) in calls:
            runs.append(_Run(calls[str(payload["call_id"])], _output_failed(payload.get("output"))))
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        for block in message.get("content") or [] if isinstance(message.get("content"), list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                command = _command_of(block.get("input"))
                if command:
                    calls[str(block.get("id"))] = command
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in calls:
                content = block.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                failed = bool(block.get("is_error")) or bool(_FAILURE.search(text))
                runs.append(_Run(calls[str(block["tool_use_id"])], failed))
    return runs, cwd


def _flat(text: str, cwd: str | None) -> str:
    text = " ".join(text.split())
    return text.replace(cwd.rstrip("/") + "/", "").replace(cwd.rstrip("/"), ".") if cwd else text


def _matches(remembered: str, run: _Run, cwd: str | None) -> bool:
    core = remembered.split("…")[0].strip()
    core = re.sub(r"^cd \S+ && ", "", core)
    return bool(core) and core in _flat(run.command, cwd)


@pytest.fixture(params=FIXTURES, ids=[Path(name).name[:40] for name in FIXTURES])
def rendered(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    path = shared_fixture(request.param)
    env = {"MNEMOLOG_HOME": str(tmp_path / "mnemolog"), "HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    result = run_cli("run", "--all", str(path), env=env)
    assert result.code == 0, result.out + result.err
    folder = tmp_path / "mnemolog" / "memories"
    memory = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*.md")))
    return path, memory


def test_no_failing_command_is_remembered_as_passed(rendered: tuple[Path, str]) -> None:
    path, memory = rendered
    runs, cwd = _runs(path)
    for remembered in dict.fromkeys(_REMEMBERED.findall(memory)):
        matching = [run for run in runs if _matches(remembered, run, cwd)]
        assert not matching or any(not run.failed for run in matching), (
            f"memory says `{remembered}` passed, but every run of it in {path.name} failed: "
            + "; ".join(run.command for run in matching)
        )


def test_a_command_run_in_a_folder_keeps_it(rendered: tuple[Path, str]) -> None:
    path, memory = rendered
    runs, cwd = _runs(path)
    facts = [" ".join(line.split()) for line in _REMEMBERED.findall(memory)]
    for run in runs:
        found = re.match(r"^cd (\S+) && (.+)$", " ".join(run.command.split()))
        if not found or found.group(1).rstrip("/") in (cwd or "", "."):
            continue
        folder, rest = found.groups()
        folder = _flat(folder, cwd).removeprefix("./")
        for fact in facts:
            if fact.endswith(rest) or fact == rest:
                assert fact.startswith(f"cd {folder} && "), f"`{fact}` lost the folder {folder} it ran in ({path.name})"
