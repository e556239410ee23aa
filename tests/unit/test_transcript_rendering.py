"""Compact, budgeted rendering of transcripts for the phase-1 model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from mnemolog.adapters.tokens import count_tokens, tail_to_tokens, truncate_to_tokens
from mnemolog.adapters.transcript_rendering import (
    plain_codex_items,
    plain_codex_tokens,
    plain_codex_tokens_from_file,
    render_for_model,
    trim_text,
)
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript, TranscriptItem

META = SessionMeta(source="codex", native_id="t1", path="/x.jsonl", cwd="/repo")
NOISE = "\n".join(
    f"collecting tests/module_{i}/test_feature.py::test_case_{i} PASSED [ {i % 100}%]"
    for i in range(4_000)
)
USER_MESSAGES = (
    "Please always run the tests with uv run pytest, never bare pytest.",
    "The build is broken on CI, can you look?",
    "Thanks. From now on keep commits small.",
)
ERROR_LINES = (
    "E   AssertionError: expected 3 got 4",
    "FAILED tests/test_math.py::test_add - AssertionError",
    "Traceback (most recent call last):",
    "ImportError: cannot import name 'frob' from 'pkg'",
)


def user(text: str) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.USER, text=text)


def call(call_id: str, command: str) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.TOOL_CALL, tool="shell", call_id=call_id, text=command)


def output(
    call_id: str, text: str, exit_code: int | None = 0, is_error: bool = False
) -> TranscriptItem:
    return TranscriptItem(
        kind=ItemKind.TOOL_OUTPUT,
        tool="shell",
        call_id=call_id,
        text=text,
        exit_code=exit_code,
        is_error=is_error,
    )


def huge_session() -> Transcript:
    items = [
        user(USER_MESSAGES[0]),
        call("c1", "uv run pytest"),
        output("c1", NOISE + "\n" + ERROR_LINES[0] + "\n" + NOISE + "\n" + ERROR_LINES[1], 1),
        TranscriptItem(kind=ItemKind.ASSISTANT, text="I'll look at the failing test. " * 40),
        user(USER_MESSAGES[1]),
        call("c2", "python -m build"),
        output("c2", ERROR_LINES[2] + "\n" + NOISE + "\n" + ERROR_LINES[3], 1),
        call("c3", "cat big.log"),
        output("c3", NOISE),
        call("c4", "cat big.log"),
        output("c4", NOISE),
        call("c5", "frob"),
        output("c5", "permission denied", is_error=True, exit_code=None),
        user(USER_MESSAGES[2]),
    ]
    return Transcript(meta=META, items=tuple(items))


def test_small_session_is_rendered_whole_with_headers() -> None:
    session = Transcript(
        meta=META,
        items=(user("hi {json: true}"), call("c1", "ls"), output("c1", "a\nb", exit_code=2)),
    )
    rendered = render_for_model(session, 10_000)
    assert rendered.level == 0 and rendered.cut_tokens == 0
    assert rendered.text == (
        "[1] user:\nhi {json: true}\n\n"
        "[2] call shell (call c1):\nls\n\n"
        "[3] output exit=2:\na\nb"
    )
    assert rendered.tokens == count_tokens(rendered.text)


def test_calls_show_their_arguments_and_outputs_lose_what_the_header_says() -> None:
    long_id, other = "toolu_01BYfGNktE4d25hZnxHwFh2s", "toolu_0128jGRf44EKe4LNWkvCoZoH"
    write = json.dumps({"file_path": "/w/a.py", "content": 'print("hi")\n'})
    bash = json.dumps({"command": "cat nope.txt", "description": "Attempt to read a missing file"})
    session = Transcript(
        meta=META,
        items=(
            TranscriptItem(kind=ItemKind.TOOL_CALL, tool="Write", call_id=long_id, text=write),
            TranscriptItem(kind=ItemKind.TOOL_CALL, tool="Bash", call_id=other, text=bash),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="Write", call_id=long_id, text="File created"),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="Bash", call_id=other, exit_code=1, is_error=True,
                           text="Exit code 1\ncat: nope.txt: No such file or directory"),
            TranscriptItem(kind=ItemKind.TOOL_CALL, tool="Read", call_id="c9", text='{"file_path": "/w/a.py"}'),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="Read", call_id="c9",
                           text="     1\u2192import os\n     2\u2192x  =   1\n     3\u2192raise ValueError('a  b')"),
        ),
    )
    assert render_for_model(session, 10_000).text == (
        "[1] call Write:\nfile_path: /w/a.py\ncontent:\nprint(\"hi\")\n\n\n"
        "[2] call Bash:\ncat nope.txt\n\n"
        "[3] output Write of #1:\nFile created\n\n"
        "[4] output Bash of #2 exit=1 ERROR:\ncat: nope.txt: No such file or directory\n\n"
        "[5] call Read (call c9):\n/w/a.py\n\n"
        "[6] output:\nimport os\nx = 1\n     3\u2192raise ValueError('a  b')"  # an error line stays as printed
    )


@pytest.mark.parametrize("budget", [20_000, 4_000, 1_500, 600])
def test_user_messages_and_errors_survive_small_budgets(budget: int) -> None:
    rendered = render_for_model(huge_session(), budget)
    assert rendered.tokens <= budget
    assert rendered.tokens == count_tokens(rendered.text)
    assert rendered.cut_tokens == 0
    for message in USER_MESSAGES:
        assert message in rendered.text
    for line in ERROR_LINES:
        assert line in rendered.text
    assert "permission denied" in rendered.text  # an is_error item is never dropped
    assert "lines trimmed …]" in rendered.text


def test_repeated_outputs_collapse() -> None:
    rendered = render_for_model(huge_session(), 200_000)
    assert "[same output as call c3]" in rendered.text
    assert rendered.text.count("collecting tests/module_0/") < 5


def test_far_fewer_tokens_than_codex_plain_serialisation() -> None:
    session = huge_session()
    plain = plain_codex_tokens(session)
    rendered = render_for_model(session, 8_000)
    assert plain > 100_000
    assert rendered.tokens * 10 < plain


def test_blocks_are_dropped_from_the_middle_before_cutting() -> None:
    items = [user("first question")]
    for i in range(60):
        items += [
            call(f"c{i}", f"echo step {i} " + "x" * 200),
            output(f"c{i}", f"ok {i} " + "y" * 300),
        ]
    items.append(user("last question"))
    rendered = render_for_model(Transcript(meta=META, items=tuple(items)), 400)
    assert rendered.tokens <= 400
    assert rendered.dropped_items > 0 and rendered.cut_tokens == 0
    assert "items omitted …]" in rendered.text
    assert "first question" in rendered.text and "last question" in rendered.text


def test_middle_cut_is_the_last_resort() -> None:
    big_user = "\n".join(f"user pasted line {i}" for i in range(3_000))
    session = Transcript(meta=META, items=(user(big_user),))
    rendered = render_for_model(session, 300)
    assert rendered.tokens <= 300
    assert rendered.cut_tokens > 0
    assert "tokens truncated …]" in rendered.text
    assert rendered.text.startswith("[1] user:\nuser pasted line 0")
    assert rendered.text.rstrip().endswith("user pasted line 2999")


def test_empty_transcript_and_bad_budget() -> None:
    assert render_for_model(Transcript(meta=META), 100).text == ""
    with pytest.raises(ValueError):
        render_for_model(Transcript(meta=META), 0)


def test_trim_text_keeps_error_lines_between_markers() -> None:
    lines = [f"line {i}" for i in range(100)]
    lines[50] = "error: boom"
    trimmed = trim_text("\n".join(lines), head=2, tail=2, line_chars=100)
    assert trimmed.splitlines() == [
        "line 0",
        "line 1",
        "[… 48 lines trimmed …]",
        "error: boom",
        "[… 47 lines trimmed …]",
        "line 98",
        "line 99",
    ]


def test_trim_text_cuts_very_long_lines() -> None:
    trimmed = trim_text("a" * 5_000, head=1, tail=1, line_chars=100)
    assert len(trimmed) < 200
    assert "chars trimmed …]" in trimmed


def test_plain_codex_items_is_a_compact_json_array() -> None:
    session = Transcript(
        meta=META, items=(user("héllo"), call("c1", '{"cmd":"ls"}'), output("c1", "x", 0))
    )
    array = json.loads(plain_codex_items(session))
    assert [entry["type"] for entry in array] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert array[0]["content"][0] == {"type": "input_text", "text": "héllo"}
    assert json.loads(array[2]["output"]) == {"output": "x", "metadata": {"exit_code": 0}}
    assert "héllo" in plain_codex_items(session)  # not \\u-escaped, as serde_json writes it


def test_plain_codex_tokens_from_file_keeps_what_codex_keeps(tmp_path: Path) -> None:
    def line(kind: str, payload: Mapping[str, object]) -> str:
        return json.dumps({"timestamp": "2025-01-01T00:00:00Z", "type": kind, "payload": payload})

    kept_user = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "fix it"}],
    }
    agents = {
        "type": "message",
        "role": "user",
        "content": [
            {
                "type": "input_text",
                "text": "# AGENTS.md instructions for /r\n<INSTRUCTIONS>x</INSTRUCTIONS>",
            }
        ],
    }
    lines = [
        line("session_meta", {"id": "t1", "cwd": "/r"}),
        line("response_item", kept_user),
        line("response_item", agents),
        line(
            "response_item",
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "dev " * 500}],
            },
        ),
        line(
            "response_item", {"type": "reasoning", "summary": [], "encrypted_content": "z" * 5000}
        ),
        line(
            "response_item",
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        ),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        line("event_msg", {"type": "token_count"}),
        "not json at all",
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expected = [
        kept_user,
        {**agents, "content": []},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    ]
    assert plain_codex_tokens_from_file(path) == count_tokens(
        json.dumps(expected, ensure_ascii=False, separators=(",", ":"))
    )


def test_tokens_helpers() -> None:
    assert count_tokens("") == 0
    text = "alpha beta gamma delta " * 10
    assert count_tokens(truncate_to_tokens(text, 5)) <= 5
    assert text.startswith(truncate_to_tokens(text, 5))
    assert text.endswith(tail_to_tokens(text, 5))
    assert truncate_to_tokens("short", 100) == "short"
    long_text = "word\n" * 300_000  # longer than the tokenizer accepts in one call
    assert count_tokens(long_text) == 600_000
    assert count_tokens("<|endoftext|>") > 1  # special tokens count as text


REAL_ROLLOUT = Path(
    "/work/shared/fixtures/codex-rollouts/"
    "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)


@pytest.mark.skipif(not REAL_ROLLOUT.exists(), reason="shared Codex fixture not present")
def test_real_rollout_renders_well_under_codex_plain_size() -> None:
    session_files = pytest.importorskip("mnemolog.adapters.session_files")
    session = session_files.read_session(REAL_ROLLOUT)
    plain = plain_codex_tokens_from_file(REAL_ROLLOUT)
    rendered = render_for_model(session, 20_000)
    assert rendered.tokens <= 20_000 < plain
    for item in session.items:
        if item.kind is ItemKind.USER:
            assert item.text.strip() in rendered.text
