"""Reading Codex rollouts: the real shared fixtures and a hand-written legacy file."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.session_files import read_session
from mnemolog.domain.transcript import ItemKind, Transcript
from support.shared_fixtures import shared_fixture

ROLLOUTS = "codex-rollouts"


def kinds(transcript: Transcript) -> dict[str, int]:
    return dict(Counter(item.kind.value for item in transcript.items))


def test_real_cli_rollout_with_web_search_and_patches() -> None:
    path = shared_fixture(
        f"{ROLLOUTS}/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    t = read_session(path)
    meta = t.meta
    assert meta.source == "codex"
    assert meta.native_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert meta.cwd == "/Users/Sample_User/repos/codemie-ai/codemie-code"
    assert meta.git_branch == "feat/codex-agent-plugin"
    assert meta.git_remote == "git@github.com:codemie-ai/codemie-code.git"
    assert meta.git_commit == "c8c252acd853de59c54b5c31374fec6028ee812e"
    assert meta.agent_version == "0.125.0"
    assert (meta.origin, meta.interactive, meta.is_subagent) == ("cli", True, False)
    assert meta.first_user_message == "show tools"
    assert meta.started_at == datetime(2026, 5, 11, 8, 26, 55, 42000, tzinfo=UTC)
    assert meta.updated_at == datetime(2026, 5, 11, 8, 44, 58, 544000, tzinfo=UTC)
    # 99 function calls + 3 apply_patch + 3 web searches; 99 + 3 outputs.
    assert kinds(t) == {"user": 2, "context": 1, "assistant": 13, "tool_call": 105, "tool_output": 102}
    assert t.line_count == 386
    assert t.skipped == {}
    assert t.used_web_search is True
    assert t.used_mcp_tools == ()
    assert t.citations == ()
    tools = Counter(item.tool for item in t.items if item.kind is ItemKind.TOOL_CALL)
    assert tools == {
        "exec_command": 43,
        "write_stdin": 54,
        "update_plan": 2,
        "apply_patch": 3,
        "web_search": 3,
    }


def test_real_rollout_drops_agents_md_and_keeps_environment_context_as_context_not_a_user_message() -> None:
    path = shared_fixture(
        f"{ROLLOUTS}/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    t = read_session(path)
    users = [item.text for item in t.items if item.kind is ItemKind.USER]
    context = [item for item in t.items if item.kind is ItemKind.CONTEXT]
    assert [item.tool for item in context] == ["environment_context"]
    assert context[0].text.startswith("<environment_context>")
    assert t.user_message_count == 2
    assert users == ["show tools", "let's update the defailt context compart to 90 in env var"]
    assert not any("AGENTS.md instructions" in text for text in users)
    assert not any(
        "permissions instructions" in item.text
        for item in t.items
        if item.kind in (ItemKind.USER, ItemKind.ASSISTANT)
    )


def test_real_rollout_exit_codes_from_unified_exec_and_json_outputs() -> None:
    path = shared_fixture(
        f"{ROLLOUTS}/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    t = read_session(path)
    outputs = [item for item in t.items if item.kind is ItemKind.TOOL_OUTPUT]
    codes = Counter(item.exit_code for item in outputs)
    assert codes == {None: 56, 0: 42, 1: 3, 2: 1}
    assert sum(item.is_error for item in outputs) == 4
    patch_outputs = [item for item in outputs if item.tool == "apply_patch"]
    assert len(patch_outputs) == 3
    assert all(item.exit_code == 0 and item.text.startswith("Success.") for item in patch_outputs)


def test_real_exec_rollout_with_json_shell_outputs_and_ghost_snapshot() -> None:
    path = shared_fixture(
        f"{ROLLOUTS}/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
    )
    t = read_session(path)
    meta = t.meta
    assert meta.native_id == "019b7f94-51b4-7593-922e-ba12b5b73b52"
    assert meta.cwd == "/Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code"
    assert meta.git_branch == "codex"
    assert meta.agent_version == "0.77.0"
    assert (meta.origin, meta.interactive, meta.is_subagent) == ("exec", False, False)
    assert meta.first_user_message is not None
    assert meta.first_user_message.startswith("what is current repository about?")
    assert kinds(t) == {"user": 1, "context": 1, "tool_call": 3, "tool_output": 3}
    assert t.line_count == 26
    assert t.skipped == {}
    assert not t.used_web_search
    outputs = [item for item in t.items if item.kind is ItemKind.TOOL_OUTPUT]
    assert [item.exit_code for item in outputs] == [0, 0, 0]
    assert outputs[1].text == "docs/AGENTS.md\n"  # the JSON wrapper is unpacked
    assert all(item.tool == "shell" for item in outputs)


def test_hand_made_rollout_without_user_message_has_a_failing_call() -> None:
    path = shared_fixture(
        f"{ROLLOUTS}/rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl"
    )
    t = read_session(path)
    meta = t.meta
    assert meta.native_id == "019b7f95-0000-7000-0000-000000000001"
    assert meta.cwd == "/path/to/codemie-code"
    assert meta.git_branch == "codex"
    assert meta.git_remote is None
    assert meta.origin is None and meta.interactive is True  # no source recorded
    assert meta.first_user_message is None
    assert t.user_message_count == 0
    assert kinds(t) == {"tool_call": 3, "tool_output": 3}
    assert t.skipped == {}
    failing = [item for item in t.items if item.is_error]
    assert len(failing) == 1
    assert failing[0].exit_code == 1
    assert failing[0].call_id == "call_failure_1"
    assert failing[0].text.startswith("cat: nonexistent.txt")


def test_hand_made_current_format_two_turns() -> None:
    t = read_session(shared_fixture(f"{ROLLOUTS}/codemie-session-turn-2.jsonl"))
    meta = t.meta
    assert meta.native_id == "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
    assert meta.cwd == "/home/user/project"
    assert meta.git_branch == "main"
    assert meta.git_remote == "https://github.com/user/project"
    assert meta.agent_version == "0.129.0"
    assert (meta.origin, meta.interactive) == ("exec", False)
    assert meta.first_user_message == "Hello, Codex! Please explain what you do."
    # Two environment contexts, two prompts, two answers; developer messages dropped.
    assert kinds(t) == {"user": 2, "context": 2, "assistant": 2}
    assert t.line_count == 25
    assert t.skipped == {}
    assert not t.used_web_search and t.used_mcp_tools == ()
    assert meta.updated_at == datetime(2026, 5, 12, 10, 1, 2, 200000, tzinfo=UTC)


def _write_lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_legacy_mid_2025_format_is_read(tmp_path: Path) -> None:
    records: list[object] = [
        {
            "id": "0197aaaa-1111-7222-8333-444455556666",
            "timestamp": "2025-06-20T09:00:00.000Z",
            "instructions": "Be brief.",
            "git": {
                "commit_hash": "0123abcd",
                "branch": "trunk",
                "repository_url": "https://example.org/team/tool.git",
            },
        },
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<user_instructions>\nrepo rules\n</user_instructions>",
                },
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": "<environment_context>\n  <cwd>/srv/tool</cwd>\n</environment_context>",
                },
            ],
        },
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Rename the flag --fast to --quick"},
            ],
        },
        {"record_type": "state"},
        {"type": "reasoning", "summary": []},
        {
            "type": "local_shell_call",
            "call_id": "c1",
            "status": "completed",
            "action": {"type": "exec", "command": ["grep", "-rn", "--fast", "src"]},
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "src/cli.py:3: --fast", "metadata": {"exit_code": 0}}),
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [
                {"type": "output_text", "text": "Renamed in src/cli.py."},
            ],
        },
        {"type": "holographic_call", "payload_free": True},
    ]
    path = _write_lines(tmp_path / "rollout-2025-06-20T09-00-00-0197aaaa.jsonl", records)
    t = read_session(path)
    meta = t.meta
    assert meta.native_id == "0197aaaa-1111-7222-8333-444455556666"
    assert meta.cwd == "/srv/tool"  # from the environment context: legacy meta has no cwd
    assert meta.git_branch == "trunk"
    assert meta.git_remote == "https://example.org/team/tool.git"
    assert meta.first_user_message == "Rename the flag --fast to --quick"
    assert meta.started_at == datetime(2025, 6, 20, 9, 0, tzinfo=UTC)
    assert kinds(t) == {"user": 1, "context": 1, "tool_call": 1, "tool_output": 1, "assistant": 1}
    call = next(item for item in t.items if item.kind is ItemKind.TOOL_CALL)
    assert (call.tool, call.text) == ("local_shell", "grep -rn --fast src")
    output = next(item for item in t.items if item.kind is ItemKind.TOOL_OUTPUT)
    assert (output.tool, output.exit_code, output.text) == (
        "local_shell",
        0,
        "src/cli.py:3: --fast",
    )
    assert t.skipped == {"unknown item type: holographic_call": 1}


def _envelope(kind: str, payload: dict[str, object], second: int = 0) -> dict[str, object]:
    return {"timestamp": f"2026-03-01T10:00:{second:02d}.000Z", "type": kind, "payload": payload}


def test_subagent_mcp_citations_and_unknown_types(tmp_path: Path) -> None:
    rollout_id = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
    answer = (
        "Used the stored tip.\n<oai-mem-citation>\n<citation_entries>\n"
        "MEMORY.md:10-12|note=[build flags]\n</citation_entries>\n<rollout_ids>\n"
        f"{rollout_id}\n</rollout_ids>\n</oai-mem-citation>"
    )
    records: list[object] = [
        _envelope(
            "session_meta",
            {
                "id": "019c7000-0000-7000-8000-000000000abc",
                "timestamp": "2026-03-01T10:00:00Z",
                "cwd": "/work/app",
                "cli_version": "0.130.0",
                "memory_mode": "polluted",
                "source": {
                    "subagent": {"parent_thread_id": "019c6fff-0000-7000-8000-000000000001"}
                },
            },
        ),
        _envelope("event_msg", {"type": "user_message", "message": "Check the build flags"}, 1),
        _envelope(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<skill>\nname: x\n</skill>"},
                    {"type": "input_text", "text": "Check the build flags"},
                ],
            },
            1,
        ),
        _envelope(
            "response_item",
            {
                "type": "function_call",
                "name": "mcp__docs__search",
                "arguments": '{"q": "flags"}',
                "call_id": "m1",
            },
            2,
        ),
        _envelope(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "m1",
                "output": [{"type": "input_text", "text": "use -O2"}],
            },
            3,
        ),
        _envelope(
            "event_msg",
            {
                "type": "mcp_tool_call_end",
                "invocation": {"server": "tracker", "tool": "open_issue"},
            },
            3,
        ),
        _envelope(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer}],
            },
            4,
        ),
        _envelope(
            "event_msg",
            {
                "type": "agent_message",
                "message": "Used the stored tip.",
                "memory_citation": {
                    "entries": [
                        {"path": "MEMORY.md", "lineStart": 10, "lineEnd": 12, "note": "build flags"}
                    ],
                    "rolloutIds": [rollout_id],
                },
            },
            4,
        ),
        _envelope("world_state", {"x": 1}, 5),
        _envelope("telepathy", {"x": 1}, 6),
    ]
    t = read_session(_write_lines(tmp_path / "sub.jsonl", records))
    meta = t.meta
    assert (meta.origin, meta.interactive, meta.is_subagent) == ("subagent", False, True)
    assert meta.memory_mode == "polluted"
    assert t.used_mcp_tools == ("mcp__docs__search", "mcp__tracker__open_issue")
    assert [item.text for item in t.items if item.kind is ItemKind.USER] == [
        "Check the build flags"
    ]
    assistant = next(item for item in t.items if item.kind is ItemKind.ASSISTANT)
    assert assistant.text == "Used the stored tip."
    # The block in the text and the structured event name the same citation: kept once.
    assert len(t.citations) == 1
    assert t.citations[0].rollout_ids == (rollout_id,)
    assert t.citations[0].entries == ("MEMORY.md:10-12|note=[build flags]",)
    assert t.skipped == {"unknown line type: telepathy": 1}
    assert meta.updated_at == datetime(2026, 3, 1, 10, 0, 6, tzinfo=UTC)
