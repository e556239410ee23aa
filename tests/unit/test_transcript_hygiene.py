"""Transcript hygiene: what the harness and mnemolog itself put before the model is context, never knowledge.

Hand-made lines in the shapes Codex 0.169 and Claude Code 2.1.3xx write them
(the e2e tests read the real agents' files; these pin each rule alone).
"""

from __future__ import annotations

from typing import Any

from mnemolog.adapters.claude_reader import read_claude_records
from mnemolog.adapters.codex_reader import read_codex_records
from mnemolog.domain import served_memory
from mnemolog.domain.services.extract import transcript_of
from mnemolog.domain.session import Session, SessionFacts
from mnemolog.domain.transcript import ItemKind

SERVED_TEXT = "the deploy script lives in ops/deploy.sh (remembered)"


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-12-01T10:00:00.000Z", "type": kind, "payload": payload}


def _codex(*records: dict[str, Any]) -> Any:
    meta = _line("session_meta", {"id": "01a230fd-0000-7000-8000-000000000001", "cwd": "/w/a", "source": "cli", "cli_version": "0.169.0"})
    return read_codex_records([meta, *records], path="/x/rollout.jsonl")


def _user(text: str) -> dict[str, Any]:
    return _line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})


def test_environment_context_is_context_not_a_user_message_and_gives_the_cwd() -> None:
    t = read_codex_records(
        [_user("<environment_context>\n  <cwd>/srv/app</cwd>\n</environment_context>"), _user("fix the build")],
        path="/x/rollout.jsonl",
    )
    assert [(i.kind, i.tool) for i in t.items] == [(ItemKind.CONTEXT, "environment_context"), (ItemKind.USER, None)]
    assert t.user_message_count == 1
    assert t.meta.cwd == "/srv/app"


def test_codex_mcp_call_in_a_namespace_is_external_context_unless_it_is_mnemolog() -> None:
    t = _codex(
        _user("look it up"),
        _line("response_item", {"type": "function_call", "namespace": "mcp__docs", "name": "lookup", "arguments": "{}", "call_id": "c1"}),
        _line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "docs say X"}),
        _line("response_item", {"type": "function_call", "namespace": "mcp__mnemolog", "name": "search_memory", "arguments": '{"query": "deploy"}', "call_id": "c2"}),
        _line("response_item", {"type": "function_call_output", "call_id": "c2", "output": SERVED_TEXT}),
        _line("event_msg", {"type": "item_completed", "item": {"type": "McpToolCall", "server": "tickets", "tool": "get"}}),
    )
    assert t.used_mcp_tools == ("mcp__docs__lookup", "mcp__tickets__get")
    served = [i for i in t.items if i.kind is ItemKind.CONTEXT]
    assert [i.tool for i in served] == ["mcp__mnemolog__search_memory"]
    assert SERVED_TEXT not in served[0].text and "served by mnemolog" in served[0].text
    assert all(SERVED_TEXT not in i.text for i in t.items)
    # The other server's answer stays a tool output.
    assert [i.text for i in t.items if i.kind is ItemKind.TOOL_OUTPUT] == ["docs say X"]


def test_hook_output_in_a_message_is_served_memory_for_both_readers() -> None:
    hook = served_memory.wrap(f"# Memory\n- {SERVED_TEXT}")
    codex = _codex(_user(f"{hook}\nplease deploy"))
    claude = read_claude_records(
        [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-12-01T10:00:00Z", "message": {"role": "user", "content": f"{hook}please deploy"}}],
        path="/x/s1.jsonl",
    )
    for t in (codex, claude):
        assert [i.kind for i in t.items] == [ItemKind.CONTEXT, ItemKind.USER]
        assert [i.text for i in t.items if i.kind is ItemKind.USER] == ["please deploy"]
        assert all(SERVED_TEXT not in i.text for i in t.items)


def test_claude_mnemolog_tool_result_is_served_and_other_mcp_is_external() -> None:
    def assistant(block_id: str, name: str) -> dict[str, Any]:
        return {"type": "assistant", "uuid": f"a{block_id}", "sessionId": "s1", "message": {"id": f"m{block_id}", "role": "assistant", "content": [{"type": "tool_use", "id": block_id, "name": name, "input": {}}]}}

    def result(block_id: str, text: str) -> dict[str, Any]:
        return {"type": "user", "uuid": f"r{block_id}", "sessionId": "s1", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block_id, "content": text}]}}

    t = read_claude_records(
        [assistant("t1", "mcp__mnemolog__search_memory"), result("t1", SERVED_TEXT), assistant("t2", "mcp__docs__lookup"), result("t2", "docs")],
        path="/x/s1.jsonl",
    )
    assert t.used_mcp_tools == ("mcp__docs__lookup",)
    assert [(i.kind, i.tool) for i in t.items if i.kind in (ItemKind.CONTEXT, ItemKind.TOOL_OUTPUT)] == [
        (ItemKind.CONTEXT, "mcp__mnemolog__search_memory"),
        (ItemKind.TOOL_OUTPUT, "mcp__docs__lookup"),
    ]


def test_known_bookkeeping_lines_are_counted_not_reported_as_skipped() -> None:
    codex = _codex(_line("token_usage_record", {"usage": {}}), _line("world_state", {"full": True}), _line("brand_new", {"x": 1}))
    assert codex.ignored == {"token_usage_record": 1, "world_state": 1}
    assert codex.skipped == {"unknown line type: brand_new": 1}
    kinds = ["api-request", "api-request-blob", "api-request-shape", "atis-latch", "cost-state", "tools-used"]
    claude = read_claude_records([{"type": k, "sessionId": "s1"} for k in kinds], path="/x/s1.jsonl")
    assert claude.ignored == dict.fromkeys(kinds, 1)
    assert claude.skipped == {}


def test_phase_one_never_sees_context_items() -> None:
    t = _codex(_user("<environment_context><cwd>/w/a</cwd></environment_context>"), _user("keep tabs"))
    facts = SessionFacts(source="codex", native_id=t.meta.native_id, path=t.meta.path, scope="path:/w/a", content_hash="h")
    session = Session(facts=facts, transcript=t.items)
    assert [i.kind for i in transcript_of(session).items] == [ItemKind.USER]
