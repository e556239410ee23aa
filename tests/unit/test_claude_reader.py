"""Reading Claude Code transcripts: the real shared fixtures and small hand-made files."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.session_files import read_session
from mnemolog.domain.transcript import ItemKind, Transcript
from support.shared_fixtures import shared_fixture

CLAUDE = "claude-code"


def kinds(transcript: Transcript) -> dict[str, int]:
    return dict(Counter(item.kind.value for item in transcript.items))


def no_injected_text(transcript: Transcript) -> bool:
    return not any(
        "<system-reminder>" in item.text
        or "<local-command-stdout>" in item.text
        or "Caveat: The messages below" in item.text
        for item in transcript.items
    )


def test_real_2_0_session_with_compaction_and_failures() -> None:
    t = read_session(shared_fixture(f"{CLAUDE}/sample_main_transcript.jsonl"))
    meta = t.meta
    assert meta.source == "claude-code"
    assert meta.native_id == "c45af7b1-cb7c-4e51-93db-8cbb250a877a"
    assert meta.cwd == "/workspace"
    assert meta.git_branch is None  # recorded as "" outside a repository
    assert meta.agent_version == "2.0.76"
    assert (meta.interactive, meta.is_subagent) == (True, False)
    assert meta.first_user_message == "can you run a command ls -la"
    # Timestamps are not in line order: the range is min..max, not first..last.
    assert meta.started_at == datetime(2026, 1, 2, 19, 18, 31, 28000, tzinfo=UTC)
    assert meta.updated_at == datetime(2026, 1, 2, 19, 21, 2, 108000, tzinfo=UTC)
    # 5 prompts + "/compact"; thinking, the compact summary and the caveat are dropped.
    assert kinds(t) == {"user": 6, "tool_call": 10, "tool_output": 10, "assistant": 6}
    assert t.line_count == 63
    assert t.skipped == {}
    users = [item.text for item in t.items if item.kind is ItemKind.USER]
    assert users[-1] == "/compact"
    assert not any(text.startswith("This session is being continued") for text in users)
    failures = [(item.tool, item.exit_code) for item in t.items if item.is_error]
    assert failures == [("Bash", 1), ("Bash", 127)]
    assert no_injected_text(t)


def test_real_1_0_session_with_slash_command_and_inline_sidechains() -> None:
    t = read_session(shared_fixture(f"{CLAUDE}/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"))
    meta = t.meta
    assert meta.native_id == "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert meta.cwd == "/path/to/Demo"
    assert meta.git_branch == "main"
    assert meta.agent_version == "1.0.108"
    assert (meta.interactive, meta.is_subagent) == (True, False)
    # The only prompt is a custom slash command: its name and arguments stand in.
    assert (
        meta.first_user_message == "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"
    )
    # 12 inline sidechain lines and the isMeta command expansion are dropped.
    assert kinds(t) == {"user": 1, "assistant": 3, "tool_call": 13, "tool_output": 13}
    assert t.line_count == 53
    assert t.skipped == {}
    errors = [(item.tool, item.text[:17]) for item in t.items if item.is_error]
    assert errors == [("Task", "<tool_use_error>I"), ("Edit", "<tool_use_error>F")]
    assert t.items[-1].text.startswith("CLAUDE.mdファイルを最新の状態にアップデートしました")
    assert not any(
        "Examine the package.json" in item.text for item in t.items if item.kind is ItemKind.USER
    )
    assert no_injected_text(t)


def test_real_headless_2_1_run_with_stop_hook_feedback() -> None:
    t = read_session(shared_fixture(f"{CLAUDE}/transcript.jsonl"))
    meta = t.meta
    assert meta.native_id == "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f"
    assert meta.cwd == "/tmp/tmpqwh7888i"
    assert meta.git_branch == "master"
    assert meta.agent_version == "2.1.14"
    assert meta.first_user_message is not None
    assert meta.first_user_message.startswith("Port this Python project to Rust.")
    # The isMeta "Stop hook feedback" message is not a user message.
    assert kinds(t) == {"user": 1, "tool_call": 39, "tool_output": 39, "assistant": 16}
    assert t.line_count == 97
    assert t.skipped == {}
    tools = Counter(item.tool for item in t.items if item.kind is ItemKind.TOOL_CALL)
    assert tools == {
        "Bash": 16,
        "TodoWrite": 10,
        "Write": 7,
        "Read": 3,
        "Task": 1,
        "Edit": 1,
        "Glob": 1,
    }
    assert not any(item.is_error for item in t.items)
    assert not t.used_web_search
    assert meta.updated_at == datetime(2026, 1, 21, 6, 24, 31, 843000, tzinfo=UTC)
    assert no_injected_text(t)


def test_real_subagent_file_is_not_interactive_and_has_its_own_id() -> None:
    t = read_session(shared_fixture(f"{CLAUDE}/agent-a2898e3.jsonl"))
    meta = t.meta
    assert meta.native_id == "4d5611e5-241a-462a-8d15-5122611a9569:agent-a2898e3"
    assert (meta.origin, meta.interactive, meta.is_subagent) == ("subagent", False, True)
    assert meta.cwd == "/home/USER/projects/spotter-worktrees/spotter-dov"
    assert meta.git_branch == "spotter-dov"
    assert meta.agent_version == "2.1.39"
    assert meta.first_user_message is not None
    assert meta.first_user_message.startswith("Very thorough exploration.")
    # 70 progress lines are dropped; 33 tool pairs kept.
    assert kinds(t) == {"user": 1, "assistant": 7, "tool_call": 33, "tool_output": 33}
    assert t.line_count == 144
    assert t.skipped == {}
    assert sum(item.is_error for item in t.items) == 8


def test_real_tool_heavy_session_with_web_search_and_interruptions() -> None:
    t = read_session(shared_fixture(f"{CLAUDE}/tool_heavy.jsonl"))
    meta = t.meta
    assert meta.native_id == "d6e0bada-1959-4eec-a9d2-0bfade768d8f"
    assert meta.cwd == "/home/marco/projects/spotter"
    assert meta.git_branch == "master"
    assert meta.agent_version == "2.1.38"
    assert meta.first_user_message == "start phoenix in background"
    assert meta.started_at == datetime(2026, 2, 10, 22, 57, 51, 291000, tzinfo=UTC)
    assert kinds(t) == {"user": 5, "tool_call": 6, "tool_output": 6, "assistant": 1}
    assert t.line_count == 39
    assert t.skipped == {}
    assert t.used_web_search is True
    assert t.used_mcp_tools == ()  # "/mcp" is a local command, not an MCP tool call
    users = [item.text for item in t.items if item.kind is ItemKind.USER]
    assert users.count("[Request interrupted by user]") == 2
    assert "/mcp" in users
    # Two text blocks of one reply (one message.id) become one assistant item.
    assistant = next(item for item in t.items if item.kind is ItemKind.ASSISTANT)
    assert assistant.text == (
        "Phoenix server is starting in the background.\n\nLet me check the MCP servers status."
    )
    assert no_injected_text(t)


def _line(kind: str, uuid: str, content: object, **extra: object) -> dict[str, object]:
    role = "assistant" if kind == "assistant" else "user"
    message: dict[str, object] = {"role": role, "content": content}
    if "message_id" in extra:
        message["id"] = extra.pop("message_id")
    record: dict[str, object] = {
        "type": kind,
        "uuid": uuid,
        "sessionId": "11111111-2222-4333-8444-555555555555",
        "cwd": "/home/dev/app",
        "gitBranch": "feature/x",
        "version": "2.1.50",
        "timestamp": extra.pop("timestamp", "2026-04-01T12:00:00.000Z"),
        "isSidechain": False,
        "message": message,
    }
    record.update(extra)
    return record


def test_hand_made_transcript_rules(tmp_path: Path) -> None:
    records = [
        {"type": "summary", "summary": "Fix the flaky test", "leafUuid": "u9"},
        _line("user", "u0", "<command-name>/clear</command-name>\n<command-args></command-args>"),
        _line("user", "u1", "<system-reminder>hook said hi</system-reminder>", isMeta=True),
        _line(
            "user",
            "u2",
            [
                {
                    "type": "text",
                    "text": "Why is test_sync flaky?<system-reminder>ignore</system-reminder>",
                }
            ],
            timestamp="2026-04-01T12:00:05.000Z",
        ),
        _line(
            "assistant",
            "a1",
            [{"type": "thinking", "thinking": "hmm", "signature": "x"}],
            message_id="msg_1",
        ),
        _line("assistant", "a2", [{"type": "text", "text": "Let me look."}], message_id="msg_1"),
        _line(
            "assistant",
            "a3",
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "mcp__linear__get_issue",
                    "input": {"id": "ENG-1"},
                }
            ],
            message_id="msg_1",
        ),
        _line(
            "user",
            "u3",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "Exit code 2\nboom"}],
                }
            ],
        ),
        _line(
            "user",
            "u3",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "duplicate line written twice",
                }
            ],
        ),
        _line("user", "s1", "subagent prompt", isSidechain=True),
        _line(
            "assistant",
            "s2",
            [{"type": "text", "text": "subagent answer"}],
            isSidechain=True,
            message_id="msg_s",
        ),
        _line("assistant", "a4", [{"type": "hologram", "data": 1}], message_id="msg_2"),
        {"type": "brand-new-line-type", "sessionId": "11111111-2222-4333-8444-555555555555"},
        _line(
            "user",
            "u4",
            "This session is being continued from a previous conversation",
            isCompactSummary=True,
            timestamp="2026-04-01T11:59:00.000Z",
        ),
    ]
    path = tmp_path / "11111111-2222-4333-8444-555555555555.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    t = read_session(path)
    assert t.meta.native_id == "11111111-2222-4333-8444-555555555555"
    assert t.meta.git_branch == "feature/x"
    assert t.meta.first_user_message == "Why is test_sync flaky?"
    assert t.meta.started_at == datetime(2026, 4, 1, 11, 59, tzinfo=UTC)
    assert t.meta.updated_at == datetime(2026, 4, 1, 12, 0, 5, tzinfo=UTC)
    assert [(item.kind.value, item.text) for item in t.items] == [
        ("user", "/clear"),
        ("user", "Why is test_sync flaky?"),
        ("assistant", "Let me look."),
        ("tool_call", '{"id": "ENG-1"}'),
        ("tool_output", "Exit code 2\nboom"),
    ]
    output = t.items[-1]
    assert (output.tool, output.exit_code, output.is_error) == ("mcp__linear__get_issue", 2, True)
    assert t.used_mcp_tools == ("mcp__linear__get_issue",)
    assert t.skipped == {
        "unknown item type: hologram": 1,
        "unknown line type: brand-new-line-type": 1,
    }


def test_file_whose_lines_are_all_sidechain_is_a_subagent(tmp_path: Path) -> None:
    records = [
        _line("user", "s1", "Find the config loader", isSidechain=True, agentId="b77"),
        _line(
            "assistant",
            "s2",
            [{"type": "text", "text": "It is in app/config.py"}],
            isSidechain=True,
            agentId="b77",
            message_id="msg_9",
        ),
    ]
    path = tmp_path / "subagents" / "side.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    t = read_session(path)
    assert t.meta.native_id == "11111111-2222-4333-8444-555555555555:agent-b77"
    assert (t.meta.is_subagent, t.meta.interactive, t.meta.origin) == (True, False, "subagent")
    assert kinds(t) == {"user": 1, "assistant": 1}
