"""How a session is cut into history excerpts (domain/excerpts.py)."""

from __future__ import annotations

import json

from mnemolog.domain.excerpts import GAP, WINDOW, cut_excerpts, readable, rescrubbed, trim
from mnemolog.domain.transcript import ItemKind, TranscriptItem


def item(kind: ItemKind, text: str, line: int, tool: str | None = None) -> TranscriptItem:
    return TranscriptItem(kind=kind, text=text, line=line, tool=tool)


def test_a_short_chat_is_one_excerpt_holding_the_answers_and_the_commands() -> None:
    excerpts = cut_excerpts([
        item(ItemKind.USER, "why does the export stop at 5000 rows?", 3),
        item(ItemKind.TOOL_CALL, json.dumps({"cmd": "grep -n LIMIT export.py"}), 4, "exec_command"),
        item(ItemKind.TOOL_OUTPUT, "12: LIMIT = 5000", 5),
        item(ItemKind.ASSISTANT, "The cap is LIMIT in export.py.", 6),
        item(ItemKind.USER, "keep it", 8),
    ])

    assert [e.text for e in excerpts] == [
        "user: why does the export stop at 5000 rows?\nran: grep -n LIMIT export.py\noutput: 12: LIMIT = 5000\n"
        "assistant: The cap is LIMIT in export.py.\nuser: keep it"
    ]
    assert excerpts[0].lines == (3, 8)


def test_turns_that_do_not_fit_one_window_start_a_new_excerpt_led_in_by_the_last_answer() -> None:
    long_answer = "We measured it. " + "z" * (WINDOW - 200)
    excerpts = cut_excerpts([
        item(ItemKind.USER, "how many retries?", 1),
        item(ItemKind.ASSISTANT, long_answer, 2),
        item(ItemKind.USER, "right, " + "w " * 400 + "ok make it 12", 3),
    ])

    assert len(excerpts) == 2
    # a confirmation carries what it confirms: the assistant's last words before it
    assert excerpts[1].text.startswith("before: We measured it.") and excerpts[1].text.endswith("ok make it 12")
    assert excerpts[1].lines == (2, 3)


def test_context_the_harness_or_mnemolog_put_before_the_model_is_never_indexed() -> None:
    excerpts = cut_excerpts([
        item(ItemKind.CONTEXT, "<environment_context><cwd>/srv</cwd></environment_context>", 1),
        item(ItemKind.CONTEXT, "## Memory\n- [item:1] the deploy key is in vault", 2),
        item(ItemKind.USER, "deploy it", 3),
    ])

    assert [e.text for e in excerpts] == ["user: deploy it"]


def test_nothing_before_the_first_user_message_and_nothing_from_bookkeeping_tools() -> None:
    excerpts = cut_excerpts([
        item(ItemKind.ASSISTANT, "Hello", 1),
        item(ItemKind.USER, "fix the flaky test", 2),
        item(ItemKind.TOOL_CALL, json.dumps({"plan": [{"step": "look", "status": "in_progress"}]}), 3, "update_plan"),
        item(ItemKind.TOOL_CALL, json.dumps({"session_id": 7, "chars": ""}), 4, "write_stdin"),
        item(ItemKind.ASSISTANT, "Fixed by awaiting the fixture.", 5),
    ])

    assert [e.text for e in excerpts] == ["user: fix the flaky test\nassistant: Fixed by awaiting the fixture."]


def test_a_long_turn_is_cut_into_windows_each_starting_with_the_users_words() -> None:
    outputs = [item(ItemKind.TOOL_OUTPUT, f"line {n} " + "x" * 300, n + 2) for n in range(12)]
    excerpts = cut_excerpts([item(ItemKind.USER, "run the whole suite", 1), *outputs])

    assert len(excerpts) > 1
    for excerpt in excerpts:
        assert excerpt.text.startswith("user: run the whole suite")
        assert len(excerpt.text) <= WINDOW + 400
    held = "\n".join(e.text for e in excerpts)
    assert all(f"line {n} " in held for n in range(12)), "no output is lost between windows"


def test_long_texts_keep_their_head_and_tail() -> None:
    text = "START " + "y" * 5000 + " END"
    trimmed = trim(text, 300)

    assert trimmed.startswith("START") and trimmed.endswith("END") and GAP in trimmed and len(trimmed) <= 300


def test_codex_exec_headers_are_left_out_of_an_output_but_the_output_stays() -> None:
    raw = "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOriginal token count: 9\nOutput:\nFAILED test_x"

    assert readable(item(ItemKind.TOOL_OUTPUT, raw, 1)) == "Process exited with code 1\nFAILED test_x"


def test_a_scrub_changes_only_the_parts_it_names_trimmed_as_before() -> None:
    (excerpt,) = cut_excerpts([item(ItemKind.USER, "the token is abc123", 1), item(ItemKind.ASSISTANT, "noted", 2)])

    parts = rescrubbed(excerpt.parts, {0: "the token is [forgotten]"})

    assert [p.text for p in parts] == ["the token is [forgotten]", "noted"]
