"""The Markdown folder renderer: determinism, scope filter, token budget, item ids."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import bpe_openai
import pytest
from mnemolog.adapters.folder_writer import write_folder
from mnemolog.domain.reads import ItemRow
from mnemolog.projections.folder_model import FolderModel
from mnemolog.projections.markdown_folder import (
    SUMMARY_TOKEN_BUDGET,
    item_ids_in,
    render_folder,
)
from support.folder_models import folder_session, words
from support.folder_validator import validate_folder

BASE = datetime(2025, 6, 30, 12, tzinfo=UTC)
KINDS = ("preference", "knowledge", "failure", "task", "task")
SCOPES = ("global", "proj:a", "proj:b", "proj:c")


def large_model(n_items: int = 500, seed: int = 7, project: str | None = None) -> FolderModel:
    """A big, varied model: items in four scopes, 40 task groups, 60 days, 30 sessions."""
    rng = random.Random(seed)
    sessions = tuple(folder_session(n, SCOPES[1 + n % 3], BASE - timedelta(days=n)) for n in range(30))
    items = []
    for n in range(n_items):
        scope = SCOPES[n % 4]
        scoped_sessions = [s.session_id for s in sessions if s.scope == scope] or [
            sessions[n % 30].session_id
        ]
        items.append(
            ItemRow(
                item_id=UUID(f"00000000-0000-4000-8000-{n:012d}"),
                kind=KINDS[n % 5],
                scope=scope,
                task_group=f"group {n % 40}",
                title=f"Title number {n} about {rng.choice(['tests', 'deploys', 'builds'])}",
                text=" ".join(rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(25)),
                keywords=tuple(f"kw{rng.randint(0, 99)}" for _ in range(3)),
                evidence=tuple(UUID(s) for s in rng.sample(scoped_sessions, min(2, len(scoped_sessions)))),
                trust=rng.choice(["accepted", "proposed", "doubted", "rejected"]),
                valid_from=None,
                updated_at=BASE - timedelta(days=rng.randint(0, 60), minutes=n),
                use_count=rng.randint(0, 20),
            )
        )
    return FolderModel(
        items=tuple(items),
        sessions=sessions,
        user_profile="The user writes Python. " * 20,
        project=project,
        scope_labels={"proj:a": "Project A", "proj:b": "Project B", "proj:c": "Project C"},
    )


def test_same_model_renders_byte_identical_output() -> None:
    model = large_model(200)
    shuffled = list(model.items)
    random.Random(1).shuffle(shuffled)
    sessions = list(model.sessions)
    random.Random(2).shuffle(sessions)
    other = replace(model, items=tuple(shuffled), sessions=tuple(sessions))
    first = render_folder(model, words)
    assert render_folder(model, words) == first
    assert render_folder(other, words) == first
    assert list(first) == sorted(first)


def test_project_filter_keeps_only_that_scope_and_global() -> None:
    model = large_model(200, project="proj:a")
    files = render_folder(model, words)
    shown = {str(i.item_id): i for i in model.items}
    all_text = "\n".join(files.values())
    for item_id in item_ids_in(all_text):
        assert shown[item_id].scope in ("proj:a", "global")
    assert "Project B" not in all_text and "/src/b" not in all_text
    rollout_files = [p for p in files if p.startswith("rollout_summaries/")]
    assert len(rollout_files) == sum(1 for s in model.sessions if s.scope == "proj:a")
    assert "Global" in files["memory_summary.md"]


def test_budget_respected_with_500_items(tmp_path: Path) -> None:
    model = large_model(500)
    files = render_folder(model, words)
    summary = files["memory_summary.md"]
    assert words(summary) <= SUMMARY_TOKEN_BUDGET
    assert summary.startswith("v1\n")
    # it fills the budget rather than dropping everything
    assert words(summary) > SUMMARY_TOKEN_BUDGET * 0.8
    # the most important items survive, the least important are dropped
    kept = set(item_ids_in(summary))
    by_id = {str(i.item_id): i for i in model.items}
    accepted_usage = [by_id[i].use_count for i in kept if by_id[i].trust == "accepted"]
    assert max(i.use_count for i in model.items) in accepted_usage
    assert all(by_id[i].trust != "rejected" for i in kept)
    write_folder(files, tmp_path / "memories")
    assert validate_folder(tmp_path / "memories", words) == []


def test_budget_respected_with_the_real_tokenizer(tmp_path: Path) -> None:
    encoding = bpe_openai.get_encoding("o200k_base")

    def o200k(text: str) -> int:
        return len(encoding.encode(text))

    files = render_folder(large_model(500), o200k)
    assert o200k(files["memory_summary.md"]) <= SUMMARY_TOKEN_BUDGET
    write_folder(files, tmp_path / "memories")
    assert validate_folder(tmp_path / "memories", o200k) == []


@pytest.mark.parametrize("budget", [400, 1000, 1500])
def test_dropping_keeps_whole_lines(budget: int) -> None:
    full = render_folder(large_model(60), words, budget=10**9)["memory_summary.md"]
    cut = render_folder(large_model(60), words, budget=budget)["memory_summary.md"]
    assert words(cut) <= budget
    full_lines = set(full.splitlines())
    extra = [line for line in cut.splitlines() if line not in full_lines]
    # only placeholders and per-group "see MEMORY.md" lines are new: no line is cut short
    for line in extra:
        assert re.fullmatch(r"No .* yet\.|- group \d+: see MEMORY\.md(; keywords: .*)?", line), line


@pytest.mark.parametrize("path", ["memory_summary.md", "MEMORY.md"])
def test_every_item_bullet_carries_its_item_id(path: str) -> None:
    files = render_folder(large_model(120), words, budget=10**9)
    heading = ""
    checked = 0
    for line in files[path].splitlines():
        if line.startswith("#"):
            heading = line
            continue
        if not line.startswith("- "):
            continue
        if heading in ("### rollout_summary_files", "### keywords"):
            continue  # file references and keywords, not items
        if re.fullmatch(r"- group \d+: see MEMORY\.md(; keywords: .*)?", line):
            continue  # a whole task group, not one item
        assert re.search(r" \[item:[0-9a-f-]{36}\]$", line), line
        checked += 1
    assert checked > 50


def test_every_shown_item_is_in_memory_md() -> None:
    model = large_model(120)
    memory = render_folder(model, words)["MEMORY.md"]
    expected = {str(i.item_id) for i in model.items if i.trust != "rejected"}
    assert set(item_ids_in(memory)) == expected


def test_no_bold_and_dash_bullets_only(tmp_path: Path) -> None:
    model = large_model(20)
    noisy = replace(
        model.items[0], text="**bold** text\n* star bullet", title="**T**", kind="knowledge"
    )
    model = replace(
        model,
        items=(noisy, *model.items[1:]),
        user_profile="# Heading\n* one\n+ two\n1. three\n**bold**",
    )
    files = render_folder(model, words)
    for text in (files["memory_summary.md"], files["MEMORY.md"]):
        assert "**" not in text
        assert not re.search(r"^\s*[*+] ", text, re.MULTILINE)
    assert _validate(files, tmp_path) == []


def _validate(files: dict[str, str], tmp_path: Path) -> list[str]:
    write_folder(files, tmp_path / "memories")
    problems: list[str] = validate_folder(tmp_path / "memories", words)
    return problems


def test_profile_is_capped_at_350_words() -> None:
    model = replace(large_model(10), user_profile="word " * 1000)
    summary = render_folder(model, words, budget=10**9)["memory_summary.md"]
    profile = summary.split("## User Profile\n", 1)[1].split("\n## ", 1)[0]
    assert words(profile) == 350


def test_empty_model(tmp_path: Path) -> None:
    files = render_folder(FolderModel(items=(), sessions=()), words)
    assert files["raw_memories.md"] == "# Raw Memories\n\nNo raw memories yet.\n"
    assert files["memory_summary.md"].startswith("v1\n\n## User Profile\n")
    assert _validate(files, tmp_path) == []


def test_ordering_trust_then_usage_then_newer_then_id() -> None:
    def tip(n: int, trust: str, usage: int, day: int) -> ItemRow:
        return ItemRow(
            item_id=UUID(f"00000000-0000-4000-8000-{n:012d}"),
            kind="knowledge",
            scope="global",
            task_group="g",
            title=f"tip{n}",
            text="t",
            keywords=(),
            evidence=(),
            trust=trust,
            valid_from=None,
            updated_at=BASE + timedelta(days=day),
            use_count=usage,
        )

    items = (
        tip(1, "proposed", 99, 9),
        tip(2, "accepted", 1, 1),
        tip(3, "accepted", 5, 1),
        tip(4, "accepted", 1, 2),
        tip(5, "accepted", 1, 2),
    )
    summary = render_folder(FolderModel(items=items, sessions=()), words)["memory_summary.md"]
    tips = summary.split("## General Tips\n", 1)[1].split("\n## ", 1)[0]
    order = [line.split(":")[0] for line in tips.splitlines() if line.startswith("- ")]
    assert order == ["- tip3", "- tip4", "- tip5", "- tip2", "- tip1"]


def test_bold_is_removed_but_globs_in_code_spans_survive() -> None:
    from mnemolog.projections.markdown_folder import strip_bold

    assert strip_bold("**Always** run `rg --glob '!**/*.map'`") == "Always run `rg --glob '!**/*.map'`"


def test_an_unmatched_backtick_opens_no_code_span() -> None:
    from mnemolog.projections.markdown_folder import strip_bold

    assert strip_bold("`rg --glob '!**/*.map'…: **bold**") == "'rg --glob '!`**`/*.map'…: bold"


def test_star_runs_that_are_not_bold_are_kept_verbatim_in_code() -> None:
    from mnemolog.projections.markdown_folder import strip_bold

    assert strip_bold("failed (make: *** No rule to make target 'serve'.  Stop.)") == (
        "failed (make: `***` No rule to make target 'serve'.  Stop.)"
    )
    assert strip_bold("`make: *** No rule` and **bold**") == "`make: *** No rule` and bold"
