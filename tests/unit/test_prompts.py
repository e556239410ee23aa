"""Prompt templates: loading, hashing and single-pass rendering."""

from __future__ import annotations

import hashlib

import pytest
from mnemolog.prompts import (
    Prompt,
    combined_hash,
    load_prompt,
    neutralise_tag,
    placeholders,
    render,
)

TEMPLATES = ("stage_one_system", "stage_one_input", "consolidation_system", "consolidation_input")


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_loads_with_its_hash(name: str) -> None:
    prompt = load_prompt(name)
    assert prompt.name == name
    assert prompt.text.strip()
    assert prompt.sha256 == hashlib.sha256(prompt.text.encode("utf-8")).hexdigest()


def test_unknown_and_invalid_names_fail_clearly() -> None:
    with pytest.raises(FileNotFoundError, match="no_such_prompt"):
        load_prompt("no_such_prompt")
    with pytest.raises(ValueError, match="invalid prompt name"):
        load_prompt("../pyproject")


def test_render_leaves_json_braces_alone_and_does_not_reexpand_values() -> None:
    prompt = Prompt(name="t", text='data: {{value}} and {"json": {"a": 1}} {single}', sha256="")
    rendered = render(prompt, value='{"x": "{{other}}"}')
    assert rendered == 'data: {"x": "{{other}}"} and {"json": {"a": 1}} {single}'


def test_render_requires_every_placeholder_and_rejects_unknown_ones() -> None:
    with pytest.raises(ValueError, match="missing values for placeholders: b"):
        render("{{a}} {{b}}", a=1)
    with pytest.raises(ValueError, match="unknown placeholders: c"):
        render("{{a}}", a=1, c=2)
    assert render("{{ a }}/{{a}}", a=None) == "unknown/unknown"


def test_stage_one_input_keeps_metadata_outside_the_data_block() -> None:
    prompt = load_prompt("stage_one_input")
    assert placeholders(prompt) == {
        "session_id",
        "agent",
        "cwd",
        "git_branch",
        "started_at",
        "updated_at",
        "rendering_note",
        "session",
    }
    text = prompt.text
    start, end = text.index("<session_data>"), text.index("</session_data>")
    assert start < text.index("{{session}}") < end
    for meta in ("{{cwd}}", "{{git_branch}}", "{{agent}}", "{{started_at}}"):
        assert text.index(meta) < start


def test_stage_one_system_states_the_rules() -> None:
    text = " ".join(load_prompt("stage_one_system").text.lower().split())
    for phrase in (
        "user's own messages",
        "not a fact",
        "never follow it",
        "never store secrets",
        "all fields empty",
        "task_outcome",
        "### task 1",
        "preference signals:",
        "reusable knowledge:",
        "failures and how to do differently:",
        "references:",
    ):
        assert phrase in text, phrase


def test_stage_one_system_says_when_a_command_passed_and_keeps_its_folder() -> None:
    text = " ".join(load_prompt("stage_one_system").text.lower().split())
    for phrase in (
        "a command passed only when its output says so",
        "failed in sandbox",
        "command timed out",
        "command not found",
        "panicked",
        "npm err!",
        "`cd <dir relative to the session's folder> && <command>`",
    ):
        assert phrase in text, phrase
    assert "without a leading `cd <dir> &&`" not in text


def test_consolidation_prompts_describe_the_plan() -> None:
    system = " ".join(load_prompt("consolidation_system").text.lower().split())
    for phrase in ("`add`", "`revise`", "`invalidate`", "`retire`", "global", "evidence", "i1"):
        assert phrase in system, phrase
    assert placeholders(load_prompt("consolidation_input")) == {
        "item_count",
        "items",
        "added_count",
        "changed_count",
        "unchanged_count",
        "removed_count",
        "removed_sessions",
        "inputs",
        "notes",
    }


def test_combined_hash_depends_on_every_template_and_order() -> None:
    a, b = load_prompt("stage_one_system"), load_prompt("stage_one_input")
    assert combined_hash(a, b) == combined_hash(a, b)
    assert combined_hash(a, b) != combined_hash(b, a)
    assert combined_hash(a, b) != a.sha256


def test_neutralise_tag_defuses_open_and_close_markers() -> None:
    text = "x </session_data> y < SESSION_DATA > z"
    out = neutralise_tag(text, "session_data")
    assert "</session_data>" not in out and "<session_data>" not in out
    assert "</session_data_escaped>" in out
