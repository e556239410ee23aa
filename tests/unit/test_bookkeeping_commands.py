"""Agent bookkeeping is not knowledge, however it is invoked: patches, plans and todos run through a shell (issue 25, "less noise").

Codex (0.2x–0.4x) ran ``apply_patch`` as a shell command (``["apply_patch", "*** Begin Patch…"]``, or a
heredoc through ``bash -lc``); models call ``update_plan`` through bash, where it is "command not found".
None of it is a command the project builds, tests or runs with, so none of it is remembered as one.
"""

from __future__ import annotations

import json

from mnemolog.adapters.heuristic_extractor import HeuristicExtractor
from mnemolog.domain.transcript import ItemKind, TranscriptItem
from unit.test_heuristic_models import session, shell, user

PATCH = "*** Begin Patch\n*** Update File: src/app.py\n@@\n-    return None\n+    return cart.total()\n*** End Patch\n"


def listed(call_id: str, argv: list[str], out: str, exit_code: int) -> tuple[TranscriptItem, ...]:
    """A shell call recorded as an argv list (Codex's ``shell`` tool), with its output."""
    return (
        TranscriptItem(kind=ItemKind.TOOL_CALL, tool="shell", call_id=call_id, text=json.dumps({"command": argv})),
        TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="shell", call_id=call_id, text=out, exit_code=exit_code),
    )


def remembered(*steps: tuple[TranscriptItem, ...]) -> str:
    chat = session(user("Fix the cart total on the checkout page."), *steps, shell("z", "npm test", "Tests: 12 passed, 12 total", 0))
    return HeuristicExtractor().extract(chat).output.raw_memory


def test_apply_patch_run_through_a_shell_is_no_command() -> None:
    memory = remembered(
        listed("a", ["apply_patch", PATCH], "Done!", 0),
        shell("b", f"apply_patch <<'PATCH'\n{PATCH}PATCH", "Success. Updated the following files:\nM src/app.py", 0),
    )
    assert "apply_patch" not in memory and "Begin Patch" not in memory
    assert "npm test" in memory  # the real check is still remembered


def test_a_plan_or_todo_tool_called_through_bash_is_no_failure() -> None:
    memory = remembered(
        shell("a", 'update_plan \'{"plan": [{"step": "fix total", "status": "in_progress"}]}\'', "bash: line 1: update_plan: command not found", 127),
        shell("b", "todo_write '[{\"content\": \"fix total\"}]'", "bash: todo_write: command not found", 127),
    )
    assert "update_plan" not in memory and "todo_write" not in memory
    assert "command not found" not in memory


SINGLE_TESTS = (
    "pytest tests/test_cart.py::test_total_rounds_half_up -q",
    "python -m pytest -k test_total_rounds_half_up",
    "npx jest src/cart.test.ts -t 'rounds half up'",
    "npx vitest run src/cart.test.ts -t \"rounds half up\"",
    "cargo test cart::tests::total_rounds_half_up -- --exact",
    "go test ./cart -run TestTotalRoundsHalfUp",
    "npm test -- --testNamePattern='rounds half up'",
)


def test_one_run_of_a_single_test_is_no_fact_of_the_project() -> None:
    """'`pytest tests/test_cart.py::test_x` passed' tells the next session nothing; the suite's command does."""
    memory = remembered(*(shell(f"s{n}", command, "1 passed in 0.05s", 0) for n, command in enumerate(SINGLE_TESTS)))
    knowledge = memory.split("Reusable knowledge:", 1)[1].split("\n\n", 1)[0]
    assert knowledge.strip().splitlines() == ["- `npm test` passed"], knowledge
