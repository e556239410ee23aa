"""A command passed only when its output says so, and a command keeps the folder it ran in.

One case per output style of both agents, in the phrasing the agents really
write: Codex's unified-exec header (``Process exited with code N``), the
``shell_command`` header (``Exit code: N`` / ``Wall time`` / ``Output:``),
the older JSON-string output (``{"output": …, "metadata": {"exit_code": N}}``),
the mid-2025 plain strings the sandbox wrote instead (``failed in sandbox
LinuxSeccomp with execution error: …``, ``… command timed out``), and Claude
Code's ``tool_result`` (``Exit code N`` first, ``is_error``). Each session is
read as a session file and extracted offline; the test reads what memory says:
the ``X passed`` bullets and the Procedure's ``-> ok`` / ``-> failed`` steps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.heuristic_consolidator import parse_raw_memory
from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.adapters.heuristic_skills import parse_procedure
from mnemolog.adapters.session_files import read_session
from support.agent_sessions import ClaudeSession, CodexRollout
from support.cli import run_cli

DAY = datetime(2026, 5, 4, 9, tzinfo=UTC)
CWD = "/home/dev/codex"


# ------------------------------------------------------------------ writing one session per output style


def _legacy_codex(tmp: Path, command: str, output: Any, *, workdir: str = CWD) -> Path:
    """A mid-2025 rollout (no envelope): bare meta, ``record_type`` markers, bare items, a ``shell`` call."""
    lines: list[dict[str, Any]] = [
        {"id": "0197c3a1-0000-7000-8000-000000000001", "timestamp": "2025-07-01T10:00:00.000Z", "instructions": None,
         "git": {"commit_hash": "abc1234", "branch": "main", "repository_url": "https://github.com/openai/codex.git"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": (
            f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
            "  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>")}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Run the tests and fix what fails."}]},
        {"record_type": "state"},
        {"type": "function_call", "name": "shell", "call_id": "call_legacy1",
         "arguments": json.dumps({"command": ["bash", "-lc", command], "workdir": workdir, "timeout_ms": 600000})},
        {"type": "function_call_output", "call_id": "call_legacy1", "output": output},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
    ]
    path = tmp / "rollout-2025-07-01T10-00-00-0197c3a1-0000-7000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _shell_command_codex(tmp: Path, command: str, code: int, body: str) -> Path:
    """A ``shell_command`` call answered with the ``Exit code: N`` / ``Wall time`` / ``Output:`` header."""
    rollout = CodexRollout(1, DAY, CWD, "https://github.com/openai/codex.git").user("Run the tests.")
    rollout._add("response_item", {"type": "function_call", "name": "shell_command", "call_id": "call_sc1",
                                   "arguments": json.dumps({"command": command, "workdir": CWD})})
    rollout._add("response_item", {"type": "function_call_output", "call_id": "call_sc1",
                                   "output": f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{body}"})
    return rollout.say("Done.").write(tmp)


def _exec_codex(tmp: Path, command: str, code: int, body: str, *, workdir: str = CWD) -> Path:
    """A current ``exec_command`` call answered with the unified-exec header."""
    rollout = CodexRollout(1, DAY, CWD, "https://github.com/openai/codex.git").user("Run the tests.")
    rollout.shell(command, body, code)
    if workdir != CWD:
        call = rollout.lines[-2]["payload"]
        call["arguments"] = json.dumps({"cmd": command, "workdir": workdir, "yield_time_ms": 10000})
    return rollout.say("Done.").write(tmp)


def _claude(tmp: Path, command: str, content: str, *, is_error: bool) -> Path:
    """A Claude Code Bash call whose ``tool_result`` is ``content`` (``is_error`` as given)."""
    session = ClaudeSession(1, DAY, CWD).user("Run the tests.")
    session.tool("Bash", {"command": command, "description": "Run the tests"}, content, is_error=is_error)
    return session.say("Done.").write(tmp)


LEGACY_PANIC = (
    "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 101, "
    "stdout: running 12 tests\ntest exec::tests::sandbox_denies_network ... FAILED\n, "
    "stderr: thread 'main' panicked at core/src/exec.rs:211:9:\nassertion failed: output.status.success()\n"
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    "error: test failed, to rerun pass `-p codex-core --lib`"
)
LEGACY_TIMEOUT = "failed in sandbox None with execution error: command timed out"


def _json_string(output: str, code: int) -> str:
    return json.dumps({"output": output, "metadata": {"exit_code": code, "duration_seconds": 1.2}})


Case = tuple[str, Callable[[Path], Path], str, str]
"""(id, writer of the session file, the command as memory states it, "passed" | "failed")."""

CASES: list[Case] = [
    # Codex, structured exit codes
    ("codex-exec-exit-0", lambda t: _exec_codex(t, "cargo test", 0, "test result: ok. 12 passed; 0 failed"), "cargo test", "passed"),
    ("codex-exec-exit-1", lambda t: _exec_codex(t, "pytest -q", 1, "FAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 4 passed in 0.31s"), "pytest -q", "failed"),
    ("codex-shell-command-exit-101", lambda t: _shell_command_codex(t, "cargo test", 101, "thread 'main' panicked at src/lib.rs:3:5:\nboom"), "cargo test", "failed"),
    ("codex-shell-command-timeout-124", lambda t: _shell_command_codex(t, "cargo build", 124, "command timed out after 10000 milliseconds\n"), "cargo build", "failed"),
    ("codex-shell-command-exit-0", lambda t: _shell_command_codex(t, "npm run lint", 0, "✔ 0 errors, 0 warnings\n"), "npm run lint", "passed"),
    ("codex-json-string-exit-1", lambda t: _legacy_codex(t, "npm test", _json_string("npm ERR! Test failed.  See above for more details.\n", 1)), "npm test", "failed"),
    ("codex-json-string-exit-0", lambda t: _legacy_codex(t, "npm test", _json_string("Tests: 0 failed, 14 passed\n", 0)), "npm test", "passed"),
    # Codex, mid-2025 plain strings: the sandbox stopped the command
    ("codex-legacy-sandbox-denied", lambda t: _legacy_codex(t, "cargo test --workspace --all-features --quiet", LEGACY_PANIC), "cargo test --workspace --all-features --quiet", "failed"),
    ("codex-legacy-timed-out", lambda t: _legacy_codex(t, "cargo check --all-targets", LEGACY_TIMEOUT), "cargo check --all-targets", "failed"),
    ("codex-legacy-command-not-found", lambda t: _legacy_codex(t, "just test", "bash: line 1: just: command not found\n"), "just test", "failed"),
    ("codex-legacy-panicked", lambda t: _legacy_codex(t, "cargo run --bin codex", "thread 'main' panicked at cli/src/main.rs:40:10:\ncalled `Option::unwrap()` on a `None` value\n"), "cargo run --bin codex", "failed"),
    # the status of a pipe is tail's: the output says what happened
    ("codex-exec-piped-test-failure", lambda t: _exec_codex(t, "cargo test 2>&1 | tail -5", 0, "failures:\n    exec::tests::ok\n\ntest result: FAILED. 11 passed; 1 failed; 0 ignored\nerror: test failed, to rerun pass `--lib`"), "cargo test", "failed"),
    # Claude Code
    ("claude-exit-code-1", lambda t: _claude(t, "pytest -q", "Exit code 1\nFAILED tests/test_x.py::test_y - AssertionError\n1 failed, 3 passed in 0.20s", is_error=True), "pytest -q", "failed"),
    ("claude-command-not-found", lambda t: _claude(t, "make test", "Exit code 127\n/bin/bash: line 1: make: command not found", is_error=True), "make test", "failed"),
    ("claude-timed-out", lambda t: _claude(t, "npm run build", "Command timed out after 2m 0.0s", is_error=True), "npm run build", "failed"),
    ("claude-is-error-without-exit-code", lambda t: _claude(t, "uv run mypy src", "<tool_use_error>Error: sandbox denied network access</tool_use_error>", is_error=True), "uv run mypy src", "failed"),
    ("claude-piped-pytest-failure", lambda t: _claude(t, "pytest -q 2>&1 | tail -3", "FAILED tests/test_x.py::test_y - AssertionError\n========= 1 failed, 3 passed in 0.20s =========", is_error=False), "pytest -q", "failed"),
    ("claude-piped-npm-error", lambda t: _claude(t, "npm test 2>&1 | tail -4", "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! acme@1.0.0 test: `jest`", is_error=False), "npm test", "failed"),
    ("claude-piped-cargo-error", lambda t: _claude(t, "cargo test 2>&1 | tail -2", "test result: FAILED. 3 passed; 1 failed\nerror: test failed, to rerun pass `--lib`", is_error=False), "cargo test", "failed"),
    ("claude-success", lambda t: _claude(t, "npx tsc --noEmit", "Found 0 errors. Watching for file changes.", is_error=False), "npx tsc --noEmit", "passed"),
    ("claude-success-0-errors-piped", lambda t: _claude(t, "npm run lint 2>&1 | tail -2", "✖ 0 errors, 0 warnings\n0 problems", is_error=False), "npm run lint", "passed"),
]


def _memory(path: Path) -> str:
    return HeuristicExtractor().extract(read_session(path)).output.raw_memory


def _passed(raw: str) -> set[str]:
    """The commands memory states as ``X passed``."""
    return {text[1:-len("` passed")] for _, text in parse_raw_memory(raw).bullets if text.startswith("`") and text.endswith("` passed")}


@pytest.mark.parametrize(("case", "write", "command", "expected"), CASES, ids=[case[0] for case in CASES])
def test_a_command_passed_only_when_its_output_says_so(tmp_path: Path, case: str, write: Callable[[Path], Path], command: str, expected: str) -> None:
    raw = _memory(write(tmp_path))
    steps = {step.command: step.ok for step in parse_procedure(raw)}
    if expected == "passed":
        assert command in _passed(raw), raw
        assert steps.get(command) is True, raw
    else:
        assert command not in _passed(raw), raw
        assert steps.get(command) is False, raw  # the procedure says it failed, not "-> ok"
        assert "-> ok" not in raw, raw


def test_a_sandbox_denial_names_its_exit_code_and_the_error(tmp_path: Path) -> None:
    raw = _memory(_legacy_codex(tmp_path, "cargo test --workspace --all-features --quiet", LEGACY_PANIC))
    step = next(s for s in parse_procedure(raw) if s.command == "cargo test --workspace --all-features --quiet")
    assert step.detail.startswith("exit 101"), step
    assert "panicked" in step.detail or "test failed" in step.detail, step


def test_a_time_out_is_said_to_be_one(tmp_path: Path) -> None:
    raw = _memory(_legacy_codex(tmp_path, "cargo check --all-targets", LEGACY_TIMEOUT))
    (step,) = [s for s in parse_procedure(raw) if s.command == "cargo check --all-targets"]
    assert "timed out" in step.detail, step


# ------------------------------------------------------------------ the folder a command needs


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (lambda t: _claude(t, "cd crates/core && DELTA_ENV=test cargo test", "test result: ok. 9 passed; 0 failed", is_error=False),
         "cd crates/core && DELTA_ENV=test cargo test"),
        (lambda t: _exec_codex(t, f"cd {CWD}/codex-rs && cargo test -p codex-core", 0, "test result: ok. 40 passed"),
         "cd codex-rs && cargo test -p codex-core"),
        (lambda t: _exec_codex(t, "cargo test -p codex-core", 0, "test result: ok. 40 passed", workdir=f"{CWD}/codex-rs"),
         "cd codex-rs && cargo test -p codex-core"),
        (lambda t: _legacy_codex(t, "cargo fmt --check", _json_string("", 0), workdir=f"{CWD}/codex-rs"),
         "cd codex-rs && cargo fmt --check"),
        (lambda t: _exec_codex(t, f"cd {CWD} && cargo test", 0, "test result: ok. 40 passed"),
         "cargo test"),  # the session's own folder is where it runs anyway
    ],
    ids=["claude-cd-relative", "codex-cd-absolute-inside", "codex-workdir", "codex-legacy-workdir", "codex-cd-own-folder"],
)
def test_a_command_is_remembered_with_the_folder_it_ran_in(tmp_path: Path, write: Callable[[Path], Path], expected: str) -> None:
    raw = _memory(write(tmp_path))
    assert expected in _passed(raw), raw
    assert expected in {step.command for step in parse_procedure(raw)}, raw


def test_a_model_procedure_step_that_says_ok_with_a_failure_is_not_a_success() -> None:
    raw = (
        "### Task 1: run the tests\n\nProcedure:\n"
        "- `cargo test` -> ok (exit code: 101, thread 'main' panicked at src/lib.rs:3:5)\n"
        "- `cargo build` -> ok\n"
        "- `npm run lint` -> ok (0 errors)\n"
    )
    assert [(s.command, s.ok) for s in parse_procedure(raw)] == [("cargo test", False), ("cargo build", True), ("npm run lint", True)]


@pytest.mark.parametrize(
    ("output", "exit_code"),
    [(LEGACY_PANIC, 101), (LEGACY_TIMEOUT, None), (_json_string("1 failed", 1), 1), (_json_string("ok", 0), 0)],
    ids=["sandbox-denied", "timed-out", "json-exit-1", "json-exit-0"],
)
def test_the_codex_reader_marks_a_sandbox_refusal_as_an_error(tmp_path: Path, output: str, exit_code: int | None) -> None:
    transcript = read_session(_legacy_codex(tmp_path, "cargo test", output))
    (result,) = [item for item in transcript.items if item.kind.value == "tool_output"]
    assert (result.exit_code, result.is_error) == (exit_code, exit_code != 0)


def test_a_command_started_in_the_background_has_no_outcome_yet(tmp_path: Path) -> None:
    session = ClaudeSession(1, DAY, CWD).user("Start the server and run the tests.")
    session.tool("Bash", {"command": "mix phx.server", "run_in_background": True},
                 "Command running in background with ID: bae407b. Output is being written to: /tmp/claude-1000/tasks/bae407b.output")
    session.bash("mix test", "Finished in 0.4 seconds\n12 tests, 0 failures")
    raw = _memory(session.say("Done.").write(tmp_path))
    assert [(s.command, s.ok) for s in parse_procedure(raw)] == [("mix test", True)], raw


def test_the_legacy_rollout_of_the_finding_leaves_no_passed_fact_in_the_memory_folder(tmp_path: Path) -> None:
    """The shape of the real 2025 rollout: `cd codex-rs && cargo test …` refused by the sandbox, `cargo check` timed out."""
    lines: list[dict[str, Any]] = [
        {"id": "0197c3a1-0000-7000-8000-000000000002", "timestamp": "2025-07-01T10:00:00.000Z", "instructions": None,
         "git": {"commit_hash": "abc1234", "branch": "main", "repository_url": "https://github.com/openai/codex.git"}},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<environment_context>\n  <cwd>{CWD}</cwd>\n</environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Make the workspace build and its tests pass."}]},
    ]
    for n, (command, output) in enumerate([
        ("cd codex-rs && cargo test --workspace --all-features --quiet", LEGACY_PANIC),
        ("cd codex-rs && cargo check --all-targets", LEGACY_TIMEOUT),
    ]):
        lines.append({"type": "function_call", "name": "shell", "call_id": f"call_{n}",
                      "arguments": json.dumps({"command": ["bash", "-lc", command], "workdir": CWD})})
        lines.append({"type": "function_call_output", "call_id": f"call_{n}", "output": output})
    path = tmp_path / "rollout-2025-07-01T10-00-00-0197c3a1-0000-7000-8000-000000000002.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    env = {"MNEMOLOG_HOME": str(tmp_path / "m"), "HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    result = run_cli("run", "--all", str(path), env=env)
    assert result.code == 0, result.out + result.err
    folder = "\n".join(p.read_text(encoding="utf-8") for p in sorted((tmp_path / "m" / "memories").rglob("*.md")))
    assert "passed" not in folder.replace("12 passed", "") and "-> ok" not in folder, folder
    assert "`cd codex-rs && cargo test --workspace --all-features --quiet` -> failed (exit 101" in folder, folder
    assert "`cd codex-rs && cargo check --all-targets` -> failed (timed out" in folder, folder
