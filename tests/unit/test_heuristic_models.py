"""The offline heuristic extractor and consolidator: deterministic, model-shaped output."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from mnemolog.adapters.heuristic_consolidator import (
    HeuristicConsolidator,
    normalise,
    parse_raw_memory,
)
from mnemolog.adapters.heuristic_extractor import HEURISTIC_VERSION, HeuristicExtractor
from mnemolog.domain.plan import GLOBAL_SCOPE, ItemKindName
from mnemolog.domain.ports import (
    ConsolidationRequest,
    InputForModel,
    ItemForModel,
    NoteForModel,
)
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript, TranscriptItem

META = SessionMeta(source="codex", native_id="s1", path="/p.jsonl", cwd="/work/app")


def shell(call_id: str, command: str, out: str, exit_code: int) -> tuple[TranscriptItem, ...]:
    args = json.dumps({"command": ["bash", "-lc", command]})
    return (
        TranscriptItem(kind=ItemKind.TOOL_CALL, tool="shell", call_id=call_id, text=args),
        TranscriptItem(
            kind=ItemKind.TOOL_OUTPUT, tool="shell", call_id=call_id, text=out, exit_code=exit_code
        ),
    )


def session(*items: TranscriptItem | tuple[TranscriptItem, ...]) -> Transcript:
    flat: list[TranscriptItem] = []
    for entry in items:
        flat.extend(entry if isinstance(entry, tuple) else (entry,))
    return Transcript(meta=META, items=tuple(flat))


def user(text: str) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.USER, text=text)


RICH = session(
    user(
        "<environment_context>cwd=/work/app</environment_context>\n"
        "Fix the failing tests. Please use uv, never pip. Thanks!"
    ),
    shell("a", "pytest -q", "bash: pytest: command not found", 127),
    shell("b", "uv run pytest -q", "5 passed in 0.1s", 0),
    shell("c", "git push", "fatal: no upstream branch\nerror: failed to push some refs", 1),
    TranscriptItem(kind=ItemKind.ASSISTANT, text="You should always rebase first."),
)


def test_extractor_identity() -> None:
    extractor = HeuristicExtractor()
    assert extractor.name == "heuristic"
    answer = extractor.extract(RICH)
    assert answer.model == "heuristic"
    assert answer.prompt_hash == hashlib.sha256(HEURISTIC_VERSION.encode()).hexdigest()
    assert answer.usage.input_tokens == 0


def test_extractor_keeps_directives_fixes_passing_checks_and_failures() -> None:
    output = HeuristicExtractor().extract(RICH).output
    parsed = parse_raw_memory(output.raw_memory)
    assert parsed.front_matter["task"] == "Fix the failing tests."
    assert parsed.front_matter["task_group"] == "app"
    assert parsed.front_matter["cwd"] == "/work/app"
    assert (
        parsed.front_matter["task_outcome"] == "partial"
    )  # the push failed after the tests passed
    bullets = {(kind.value, text) for kind, text in parsed.bullets}
    assert ("preference", "Please use uv, never pip.") in bullets
    assert ("knowledge", "`uv run pytest -q` passed") in bullets
    assert (
        "failure",
        "`pytest -q` failed with exit 127 (`bash: pytest: command not found`) -> `uv run pytest -q` worked",
    ) in bullets
    assert any(kind == "failure" and "error: failed to push" in text for kind, text in bullets)
    # the assistant's advice is not a user directive; injected context is not a directive either
    assert not any("rebase" in text for _, text in bullets)
    assert "environment_context" not in output.raw_memory
    assert output.rollout_slug == "fix-the-failing-tests"
    assert output.rollout_summary.startswith("The user asked: Fix the failing tests.")
    assert "### Task 1: Fix the failing tests." in output.raw_memory


def test_extractor_follows_codex_exec_sessions_and_ignores_empty_grep() -> None:
    def item(
        kind: ItemKind, tool: str, call_id: str, text: str, exit_code: int | None = None
    ) -> TranscriptItem:
        return TranscriptItem(kind=kind, tool=tool, call_id=call_id, text=text, exit_code=exit_code)

    running = "Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 42\nOutput:\n"
    done = "Chunk ID: b\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n3 passed\n"
    chat = session(
        user("Run the tests."),
        item(ItemKind.TOOL_CALL, "exec_command", "c1", '{"cmd": "cargo test", "workdir": "/work/app"}'),
        item(ItemKind.TOOL_OUTPUT, "exec_command", "c1", running),
        item(ItemKind.TOOL_CALL, "write_stdin", "c2", '{"session_id": 42, "chars": ""}'),
        item(ItemKind.TOOL_OUTPUT, "write_stdin", "c2", done, exit_code=0),
        shell("c3", "rg -n nothing_here src", "", 1),
    )
    output = HeuristicExtractor().extract(chat).output
    bullets = parse_raw_memory(output.raw_memory).bullets
    assert bullets == ((ItemKindName.KNOWLEDGE, "`cargo test` passed"),)


def test_extractor_answers_empty_when_nothing_is_worth_remembering() -> None:
    chat = session(
        user("What does this function do?"),
        TranscriptItem(kind=ItemKind.ASSISTANT, text="It adds two numbers."),
        shell("a", "cat add.py", "def add(a, b): return a + b", 0),
    )
    answer = HeuristicExtractor().extract(chat)
    assert answer.output.is_empty
    assert answer.output.rollout_slug is None


def test_extractor_is_deterministic() -> None:
    assert HeuristicExtractor().extract(RICH) == HeuristicExtractor().extract(RICH)


# --- consolidation ----------------------------------------------------------------------------

APP = "git:github.com/acme/app"
LIB = "git:github.com/acme/lib"


def raw(task: str, *, prefs: tuple[str, ...] = (), knowledge: tuple[str, ...] = ()) -> str:
    lines = [
        "---",
        f"description: {task}",
        f"task: {task}",
        "task_outcome: success",
        "keywords: pytest, uv",
        "---",
        "",
        f"### Task 1: {task}",
        "",
        "Preference signals:",
        *(f"- {p}" for p in prefs),
        "",
        "Reusable knowledge:",
        *(f"- {k}" for k in knowledge),
        "",
        "References:",
        "- session",
    ]
    return "\n".join(lines)


def entry(session_id: str, scope: str, memory: str, change: str = "added") -> InputForModel:
    return InputForModel(
        session_id=session_id,
        scope=scope,
        cwd="/work",
        updated_at=datetime(2025, 3, int(session_id[-1]), tzinfo=UTC),
        rollout_summary=f"Summary of {session_id}",
        raw_memory=memory,
        change=change,
    )


def test_one_task_per_input_and_bullets_merged_across_sessions() -> None:
    request = ConsolidationRequest(
        items=(),
        inputs=(
            entry("s2", LIB, raw("Fix lib", prefs=("Use uv, never pip!",))),
            entry(
                "s1",
                APP,
                raw("Fix app", prefs=("use uv,  never pip",), knowledge=("Run `make test`.",)),
            ),
        ),
        removed_sessions=(),
        notes=(),
    )
    plan = HeuristicConsolidator().consolidate(request).plan
    tasks = [edit for edit in plan.edits if edit.kind is ItemKindName.TASK]
    assert [(t.scope, t.evidence, t.title) for t in tasks] == [
        (APP, ("s1",), "Fix app (success)"),
        (LIB, ("s2",), "Fix lib (success)"),
    ]
    assert tasks[0].task_group == "app" and tasks[0].keywords == ("pytest", "uv")
    [pref] = [edit for edit in plan.edits if edit.kind is ItemKindName.PREFERENCE]
    assert pref.op == "add"
    assert pref.evidence == ("s1", "s2")
    assert pref.scope == GLOBAL_SCOPE  # seen in two projects
    [knowledge] = [edit for edit in plan.edits if edit.kind is ItemKindName.KNOWLEDGE]
    assert knowledge.scope == APP and knowledge.evidence == ("s1",)
    assert knowledge.valid_from == datetime(2025, 3, 1, tzinfo=UTC)


def test_existing_items_revised_only_when_evidence_changes_and_retired_when_removed() -> None:
    items = (
        ItemForModel("I1", "preference", APP, "app", "uv", "Use uv, never pip.", (), ("s1",)),
        ItemForModel("I2", "knowledge", APP, "app", "make", "Run `make test`.", (), ("s1",)),
        ItemForModel("I3", "knowledge", APP, "app", "old", "Old fact.", (), ("s0",)),
        ItemForModel("I10", "knowledge", APP, "app", "mixed", "Mixed fact.", (), ("s0", "s1")),
    )
    request = ConsolidationRequest(
        items=items,
        inputs=(
            entry("s1", APP, raw("Fix app", knowledge=("Run `make test`.",)), change="unchanged"),
            entry("s3", APP, raw("Fix again", prefs=("use uv never pip",)), change="added"),
        ),
        removed_sessions=("s0",),
        notes=(),
    )
    plan = HeuristicConsolidator().consolidate(request).plan
    by_target = {edit.target: edit for edit in plan.edits if edit.target}
    assert by_target["I1"].op == "revise" and by_target["I1"].evidence == ("s1", "s3")
    assert "I2" not in by_target  # same text, same evidence: no edit
    assert by_target["I3"].op == "retire"
    assert by_target["I10"].op == "revise" and by_target["I10"].evidence == ("s1",)
    assert [edit.target for edit in plan.edits if edit.target] == ["I1", "I10", "I3"]


def test_notes_remember_and_forget() -> None:
    items = (
        ItemForModel(
            "I1", "knowledge", APP, "app", "t", "Deploy with the blue script.", (), ("s1",)
        ),
    )
    request = ConsolidationRequest(
        items=items,
        inputs=(),
        removed_sessions=(),
        notes=(
            NoteForModel("n2", "forget", APP, "blue script"),
            NoteForModel("n1", "remember", APP, "Answer in British English."),
        ),
    )
    plan = HeuristicConsolidator().consolidate(request).plan
    [add] = [edit for edit in plan.edits if edit.op == "add"]
    assert add.kind is ItemKindName.PREFERENCE and add.scope == APP
    assert add.text == "Answer in British English." and "n1" in add.reason
    assert add.evidence == ("n1",)  # the note is the item's evidence: the plan check accepts it
    [retire] = [edit for edit in plan.edits if edit.op == "retire"]
    assert retire.target == "I1" and "n2" in retire.reason


def note_plan(*notes: NoteForModel, items: tuple[ItemForModel, ...] = ()) -> list:
    request = ConsolidationRequest(items=items, inputs=(), removed_sessions=(), notes=notes)
    return list(HeuristicConsolidator().consolidate(request).plan.edits)


def test_a_remember_note_is_a_preference_unless_it_obviously_states_a_failure_or_a_fact() -> None:
    kinds = {
        edit.text: edit.kind
        for edit in note_plan(
            NoteForModel("n1", "remember", GLOBAL_SCOPE, "Remember: I like short answers."),
            NoteForModel("n2", "remember", APP, "Use pnpm, not npm"),
            NoteForModel("n3", "remember", APP, "Remember the api runs on port 8080."),
            NoteForModel("n4", "remember", APP, "The nightly build fails when the cache is cold."),
        )
    }
    assert kinds == {
        "I like short answers.": ItemKindName.PREFERENCE,
        "Use pnpm, not npm": ItemKindName.PREFERENCE,
        "the api runs on port 8080.": ItemKindName.KNOWLEDGE,
        "The nightly build fails when the cache is cold.": ItemKindName.FAILURE,
    }


def test_a_correct_note_revises_the_item_it_is_about_with_the_note_and_the_items_evidence() -> None:
    items = (
        ItemForModel("I1", "knowledge", APP, "app", "", "Exports stream CSV in chunks.", (), ("s1",)),
        ItemForModel("I2", "knowledge", APP, "app", "", "Run make test before pushing.", (), ("s2", "s3")),
        ItemForModel("I3", "knowledge", LIB, "lib", "", "Run make test before pushing.", (), ("s4",)),
    )
    [edit] = note_plan(
        NoteForModel("n1", "correct", APP, "Correction: run make check before pushing, make test is gone."), items=items
    )
    assert (edit.op, edit.target, edit.scope) == ("revise", "I2", APP)  # I3 shares the words but is another project's
    assert edit.text == "run make check before pushing, make test is gone."
    assert edit.evidence == ("n1", "s2", "s3") and "n1" in edit.reason


def test_a_correct_note_that_matches_no_item_becomes_a_new_item() -> None:
    items = (ItemForModel("I1", "knowledge", APP, "app", "", "Exports stream CSV in chunks.", (), ("s1",)),)
    [edit] = note_plan(NoteForModel("n1", "correct", APP, "The staging host is db2 now."), items=items)
    assert (edit.op, edit.scope, edit.evidence, edit.kind) == ("add", APP, ("n1",), ItemKindName.KNOWLEDGE)


def test_an_unchanged_input_adds_nothing_memory_no_longer_holds() -> None:
    """What a correction (or a forget note) took out of memory does not come back from the same extraction."""
    items = (ItemForModel("I1", "knowledge", APP, "app", "", "Run make check before pushing.", (), ("n1", "s1")),)
    request = ConsolidationRequest(
        items=items,
        inputs=(entry("s1", APP, raw("Fix app", knowledge=("Run make test before pushing.",)), change="unchanged"),),
        removed_sessions=(),
        notes=(),
    )
    assert HeuristicConsolidator().consolidate(request).plan.edits == ()


def test_plan_is_stable_whatever_the_input_order() -> None:
    inputs = [
        entry("s1", APP, raw("A", prefs=("p1", "p2"), knowledge=("k1",))),
        entry("s2", LIB, raw("B", prefs=("p2",), knowledge=("k2", "k1"))),
        entry("s3", APP, raw("C", knowledge=("k3",))),
    ]
    first = HeuristicConsolidator().consolidate(
        ConsolidationRequest(items=(), inputs=inputs, removed_sessions=(), notes=())
    )
    second = HeuristicConsolidator().consolidate(
        ConsolidationRequest(items=(), inputs=inputs[::-1], removed_sessions=(), notes=())
    )
    assert first == second
    assert first.model == "heuristic" and len(first.prompt_hash) == 64


def test_extractor_output_feeds_the_consolidator() -> None:
    output = HeuristicExtractor().extract(RICH).output
    request = ConsolidationRequest(
        items=(),
        inputs=(
            InputForModel(
                session_id="s1",
                scope=APP,
                cwd="/work/app",
                updated_at=None,
                rollout_summary=output.rollout_summary,
                raw_memory=output.raw_memory,
                change="added",
            ),
        ),
        removed_sessions=(),
        notes=(),
    )
    plan = HeuristicConsolidator().consolidate(request).plan
    kinds = sorted({edit.kind.value for edit in plan.edits})
    assert kinds == ["failure", "knowledge", "preference", "task"]
    assert all(edit.evidence == ("s1",) for edit in plan.edits)


def test_normalise() -> None:
    assert normalise("  Use UV,\n never   pip! ") == "use uv never pip"


# --- what is worth reading (issue 11) -------------------------------------------------------


def bullets_of(*items: TranscriptItem | tuple[TranscriptItem, ...]) -> set[tuple[str, str]]:
    output = HeuristicExtractor().extract(session(*items)).output
    return {(kind.value, text) for kind, text in parse_raw_memory(output.raw_memory).bullets}


def tool(name: str, call_id: str, args: dict, out: str, *, error: bool = False) -> tuple[TranscriptItem, ...]:
    return (
        TranscriptItem(kind=ItemKind.TOOL_CALL, tool=name, call_id=call_id, text=json.dumps(args)),
        TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool=name, call_id=call_id, text=out, is_error=error),
    )


def test_preferences_come_only_from_what_the_user_typed() -> None:
    found = bullets_of(
        user(
            "Look at this issue.\n\nThe issue says:\nMake sure to provide a valid key. Always set the key first.\n"
            "[2026-10-07 10:02:11] retrying 1/10 in 202m"
        ),
        user("```\nAlways pin the theme.\n```\nuse pnpm in this repo, not npm."),
        user("> Never use tabs.\n\nDon't stop until all tests pass. You should add a test."),
        TranscriptItem(kind=ItemKind.ASSISTANT, text="You should always run the audit."),
        shell("a", "pnpm test", "58 passed", 0),
    )
    prefs = {text for kind, text in found if kind == "preference"}
    assert prefs == {"use pnpm in this repo, not npm."}


def test_user_wide_preferences_are_global_and_project_ones_stay_in_their_project() -> None:
    memory = HeuristicExtractor().extract(session(
        user("for all my projects: write commit messages in the imperative mood. Prefer pytest fixtures here."),
        shell("a", "pytest", "3 passed", 0),
    )).output.raw_memory
    plan = HeuristicConsolidator().consolidate(
        ConsolidationRequest(items=(), inputs=(entry("s1", APP, memory),), removed_sessions=(), notes=())
    ).plan
    scopes = {edit.text: edit.scope for edit in plan.edits if edit.kind is ItemKindName.PREFERENCE}
    assert scopes == {
        "for all my projects: write commit messages in the imperative mood.": GLOBAL_SCOPE,
        "Prefer pytest fixtures here.": APP,
    }


def test_only_shell_commands_are_commands_and_trivial_ones_are_not_knowledge() -> None:
    found = bullets_of(
        user("Port the module."),
        tool("Write", "w", {"file_path": "/w/a.py", "content": "x = 1"}, "File created successfully"),
        tool("Edit", "e", {"file_path": "/w/a.py", "old_string": "1", "new_string": "2"}, "not read yet", error=True),
        tool("TodoWrite", "t", {"todos": [{"content": "port", "status": "done"}]}, "ok"),
        tool("mcp__mnemolog__search_memory", "m", {"query": "x"}, "- always deploy on Fridays [item:1]"),
        shell("a", "ls -la", "total 0", 0),
        shell("b", "cat nonexistent.txt", "cat: nonexistent.txt: No such file or directory", 1),
        shell("c", "cd /work/app && cargo test 2>&1", "test result: ok. 3 passed", 0),
    )
    assert found == {("knowledge", "`cargo test` passed")}


def test_a_fix_differs_from_the_failure_or_is_the_setup_step_before_it() -> None:
    found = bullets_of(
        user("Run the tests."),
        shell("a", "pytest", "E   ModuleNotFoundError: No module named 'acme'", 2),
        shell("b", "pip install -e .", "Successfully installed acme", 0),
        shell("c", "pytest", "3 passed", 0),
        shell("d", "make test-fast", "FAILED test_x - AssertionError", 2),
        shell("e", "make test-fast", "3 passed", 0),
        shell("f", "make serve", "make: *** No rule to make target 'serve'.  Stop.", 2),
        shell("g", "just dev", "ready", 0),
    )
    failures = {text for kind, text in found if kind == "failure"}
    assert failures == {
        "`pytest` failed with exit 2 (`E ModuleNotFoundError: No module named 'acme'`) -> run `pip install -e .` first, then `pytest` works",
        "`make serve` failed with exit 2 (`make: *** No rule to make target 'serve'. Stop.`) -> `just dev` worked",
    }  # the re-run of make test-fast after a code change is no fix worth keeping


def test_rollout_summaries_say_what_was_done_and_keywords_come_from_content() -> None:
    output = HeuristicExtractor().extract(session(
        user("Fix the build."),
        tool("Edit", "e", {"file_path": "/w/src/lib.rs", "old_string": "a", "new_string": "b"}, "updated"),
        shell("a", "cargo build", "Finished", 0),
    )).output
    assert output.rollout_summary == (
        "The user asked: Fix the build.\nCommands that passed: `cargo build`\nFiles changed: lib.rs\nOutcome: success."
    )
    keywords = parse_raw_memory(output.raw_memory).front_matter["keywords"]
    assert keywords == "cargo, lib.rs, app"


def _later(session_id: str, day: int, memory: str, change: str = "added") -> InputForModel:
    return InputForModel(session_id, APP, "/work", datetime(2025, 3, day, tzinfo=UTC), f"Summary {session_id}", memory, change)


def test_a_later_session_that_replaces_a_command_invalidates_the_old_fact() -> None:
    old = ItemForModel("I1", "knowledge", APP, "app", "", "`make serve` passed", (), ("s1",))
    replaced = raw("Fix the server").replace(
        "Reusable knowledge:",
        "Failures and how to do differently:\n- `make serve` failed with exit 2 (`make: *** No rule`) -> `just dev` worked\n\nReusable knowledge:",
    )
    request = ConsolidationRequest(
        items=(old,),
        inputs=(_later("s1", 1, raw("Serve", knowledge=("`make serve` passed",)), "unchanged"), _later("s2", 9, replaced)),
        removed_sessions=(),
        notes=(),
    )
    [ended] = [edit for edit in HeuristicConsolidator().consolidate(request).plan.edits if edit.op == "invalidate"]
    assert ended.target == "I1" and ended.valid_from == datetime(2025, 3, 9, tzinfo=UTC)
    assert ended.reason == (
        "superseded on 2025-03-09 by session s2: `make serve` failed, and another command worked; `just dev` is used instead"
    )
    # both in one run (a first import): the stale fact is not added at all
    first = ConsolidationRequest(
        items=(), inputs=(_later("s1", 1, raw("Serve", knowledge=("`make serve` passed",))), _later("s2", 9, replaced)),
        removed_sessions=(), notes=(),
    )
    texts = [edit.text for edit in HeuristicConsolidator().consolidate(first).plan.edits]
    assert "`make serve` passed" not in texts


def test_the_user_saying_a_command_was_replaced_invalidates_the_old_fact() -> None:
    old = ItemForModel("I1", "knowledge", APP, "app", "", "`make serve` passed", (), ("s1",))
    said = raw("Server", prefs=("From now on use `just dev` instead of `make serve`.",))
    request = ConsolidationRequest(
        items=(old,),
        inputs=(_later("s1", 1, raw("Serve", knowledge=("`make serve` passed",)), "unchanged"), _later("s2", 9, said)),
        removed_sessions=(),
        notes=(),
    )
    [ended] = [edit for edit in HeuristicConsolidator().consolidate(request).plan.edits if edit.op == "invalidate"]
    assert ended.target == "I1"
    assert ended.reason.endswith("`make serve` was replaced, the user said; `just dev` is used instead")


def test_a_task_a_person_rewrote_keeps_their_words_when_its_session_is_consolidated_again() -> None:
    def task_item(edited: bool) -> ItemForModel:
        return ItemForModel(
            "I1", "task", APP, "app", "Fixed the app's flaky build (success)", "Dana: the build flakes on cold caches.",
            (), ("s1",), edited_by_user=edited,
        )

    def plan_for(item: ItemForModel) -> list:  # type: ignore[type-arg]
        request = ConsolidationRequest(
            items=(item,), inputs=(entry("s1", APP, raw("Fix app"), change="changed"),), removed_sessions=(), notes=(),
        )
        return [e for e in HeuristicConsolidator().consolidate(request).plan.edits if e.target == "I1"]

    [revised] = plan_for(task_item(edited=False))
    assert revised.op == "revise" and revised.title == "Fix app (success)"  # the extracted words come back
    assert plan_for(task_item(edited=True)) == []  # the person's words stand
