"""The consolidate and notes services on an in-memory store: notes are evidence, withdrawn notes are not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.domain.consolidation import Consolidation, PhaseTwoLease
from mnemolog.domain.note import Note
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit
from mnemolog.domain.ports import ModelError
from mnemolog.domain.services.consolidate import EVERYTHING, ConsolidationPolicy, consolidate
from mnemolog.domain.services.notes import (
    NoteFile,
    UnknownNote,
    add_note,
    import_note_files,
    note_file_intent,
    withdraw_note,
)
from support.memory import extracted_session
from support.scripted_models import ScriptedConsolidator

API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"
EVERY = ConsolidationPolicy(retention=EVERYTHING)
WHEN = datetime(2026, 10, 20, 10, 0, tzinfo=UTC)


class Replacing:
    """A redactor that replaces one word (none by default)."""

    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret

    def redact(self, text: str) -> tuple[str, int]:
        if self.secret is None or self.secret not in text:
            return text, 0
        return text.replace(self.secret, "[REDACTED_SECRET]"), 1

    def redact_transcript(self, transcript):  # type: ignore[no-untyped-def]
        raise AssertionError("consolidation redacts model answers and notes only")


no_secrets = Replacing()


def note(store, text: str, intent: str = "remember", scope: str = GLOBAL_SCOPE) -> UUID:
    store.clock.advance(minutes=1)  # notes are listed in the order they were written
    return add_note(store, text, intent, scope, no_secrets).note_id


def run(store, consolidator=None):
    return consolidate(store, consolidator or HeuristicConsolidator(), no_secrets, EVERY)


def active(store) -> dict[str, object]:
    """Current items other than task records, by text."""
    return {i.text: i for i in store.reads().active_items() if i.kind != "task"}


def test_a_remember_note_becomes_an_item_whose_evidence_is_the_note(memory_store) -> None:
    noted = note(memory_store, "Answer in British English.")

    report = run(memory_store)

    assert report.status == "completed", report.detail
    assert report.added == 1 and report.notes_applied == [noted]
    [item] = memory_store.reads().active_items()
    assert (item.text, item.kind, item.scope, item.evidence) == ("Answer in British English.", "preference", GLOBAL_SCOPE, (noted,))
    [row] = memory_store.reads().notes()
    assert row.state == "applied" and row.applied_by == report.consolidation_id


def test_an_item_resting_on_a_note_stays_while_the_note_stands(memory_store) -> None:
    note(memory_store, "Answer in British English.")
    run(memory_store)

    second = run(memory_store, ScriptedConsolidator(ConsolidationPlan(edits=())))

    assert second.status == "completed" and second.retired == 0
    assert "Answer in British English." in active(memory_store)


def test_a_withdrawn_notes_item_retires_at_the_next_run(memory_store) -> None:
    noted = note(memory_store, "Answer in British English.")
    run(memory_store)
    [item] = memory_store.reads().active_items()

    withdrawn = withdraw_note(memory_store, str(noted)[:8], "changed my mind")

    assert not withdrawn.already and withdrawn.items_leaving == (item.item_id,)
    assert memory_store.reads().active_items() == [item]  # until the next run
    report = run(memory_store)
    assert report.status == "completed" and report.retired == 1
    assert memory_store.reads().active_items() == []
    assert [o.reason for o in report.overrides] == ["all evidence is gone (deleted, pruned, polluted or withdrawn)"]
    assert [n.state for n in memory_store.reads().notes()] == ["withdrawn"]
    assert withdraw_note(memory_store, str(noted)).already


def test_a_pending_note_that_is_withdrawn_is_never_applied(memory_store) -> None:
    noted = note(memory_store, "Answer in British English.")
    withdraw_note(memory_store, str(noted))

    report = run(memory_store)

    assert report.status == "completed" and report.added == 0 and report.notes_applied == []
    assert memory_store.reads().pending_notes() == []
    [row] = memory_store.reads().notes()
    assert row.state == "withdrawn" and row.applied_by is None


def test_withdrawing_an_unknown_note_says_so(memory_store) -> None:
    with pytest.raises(UnknownNote):
        withdraw_note(memory_store, "0000")
    with pytest.raises(UnknownNote):
        withdraw_note(memory_store, "not-a-note")


def test_a_correct_note_revises_the_item_it_corrects(memory_store) -> None:
    session = extracted_session(memory_store, "s1", API, "Run make test before pushing.", updated_at=WHEN)
    run(memory_store)
    before = active(memory_store)["Run make test before pushing."]
    correction = note(memory_store, "Correction: run make check before pushing, make test is gone.", "correct", API)

    report = run(memory_store)

    assert report.status == "completed", report.detail
    assert report.revised == 1 and report.added == 0
    after = active(memory_store)
    assert "Run make test before pushing." not in after
    revised = after["run make check before pushing, make test is gone."]
    assert revised.item_id == before.item_id and set(revised.evidence) == {correction, session}
    again = run(memory_store)  # the unchanged session does not bring the old text back
    assert again.added == 0 and set(active(memory_store)) == set(after)


def test_a_project_note_is_no_evidence_for_a_global_item(memory_store) -> None:
    noted = note(memory_store, "Use pnpm.", scope=API)
    plan = ConsolidationPlan(edits=(Edit(op="add", kind="preference", scope=GLOBAL_SCOPE, text="Use pnpm.", evidence=(str(noted),), reason="note"),))

    report = run(memory_store, ScriptedConsolidator(plan))

    assert report.status == "failed"
    assert [o.reason for o in report.overrides] == [
        f"notes of another scope are no evidence for an item of scope {GLOBAL_SCOPE}: {noted}"
    ]
    assert memory_store.reads().active_items() == [] and [n.state for n in memory_store.reads().notes()] == ["pending"]


def test_a_project_note_is_evidence_for_its_projects_item(memory_store) -> None:
    noted = note(memory_store, "Use pnpm.", scope=API)
    plan = ConsolidationPlan(edits=(Edit(op="add", kind="preference", scope=API, text="Use pnpm.", evidence=(str(noted),), reason="note"),))

    report = run(memory_store, ScriptedConsolidator(plan))

    assert report.status == "completed", report.detail
    assert [i.evidence for i in memory_store.reads().active_items()] == [(noted,)]


def test_an_applied_note_cannot_be_cited_again_by_a_new_item(memory_store) -> None:
    noted = note(memory_store, "Use pnpm.", scope=API)
    run(memory_store)
    plan = ConsolidationPlan(edits=(Edit(op="add", kind="preference", scope=API, text="Use pnpm everywhere.", evidence=(str(noted),), reason="r"),))

    report = run(memory_store, ScriptedConsolidator(plan))

    assert report.status == "completed" and report.added == 0 and report.repaired
    assert "not selected" in report.overrides[0].reason and report.overrides[0].action == "rejected"


def test_the_request_carries_pending_notes_only(memory_store) -> None:
    kept = note(memory_store, "Use pnpm.", scope=API)
    dropped = note(memory_store, "Use tabs.")
    withdraw_note(memory_store, str(dropped))
    model = ScriptedConsolidator(ConsolidationPlan(edits=()))

    run(memory_store, model)

    [request] = model.seen
    assert [(n.note_id, n.intent, n.scope, n.text) for n in request.notes] == [(str(kept), "remember", API, "Use pnpm.")]


def test_a_run_is_busy_while_another_holds_the_lease(memory_store) -> None:
    lease = PhaseTwoLease()
    lease.take(UUID(int=7), "elsewhere", memory_store.clock(), timedelta(minutes=30))
    memory_store.app.save_all(lease)

    report = run(memory_store)

    assert report.status == "busy" and "elsewhere" in report.detail and report.consolidation_id is None


def test_an_edit_without_evidence_is_dropped_on_its_own(memory_store) -> None:
    plan = ConsolidationPlan(edits=(Edit(op="add", kind="knowledge", scope=API, text="x", reason="r"),))

    report = run(memory_store, ScriptedConsolidator(plan))

    assert report.status == "completed" and [o.reason for o in report.overrides] == ["no evidence"]
    assert memory_store.reads().active_items() == []


def test_a_plan_that_breaks_a_rule_that_must_never_pass_is_recorded_as_failed_and_frees_the_lease(memory_store) -> None:
    noted = note(memory_store, "Use pnpm.", scope=API)
    plan = ConsolidationPlan(edits=(Edit(op="add", kind="knowledge", scope=GLOBAL_SCOPE, text="x", evidence=(str(noted),), reason="r"),))

    report = run(memory_store, ScriptedConsolidator(plan))

    assert report.status == "failed" and report.repaired
    assert [o.reason for o in report.overrides] == [f"notes of another scope are no evidence for an item of scope {GLOBAL_SCOPE}: {noted}"]
    events = list(memory_store.app.events.get(report.consolidation_id))
    assert isinstance(events[-1], Consolidation.Failed)
    assert [type(e).__name__ for e in events[1:]] == ["PlanRefused", "RepairRequested", "PlanRefused", "Failed"]
    assert run(memory_store, ScriptedConsolidator(ConsolidationPlan(edits=()))).status == "completed"


def test_the_window_widens_with_since_and_all() -> None:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    assert ConsolidationPolicy.window(30, 10, now).retention == timedelta(days=30)
    assert ConsolidationPolicy.window(30, 10, now, since=now - timedelta(days=90)).retention == timedelta(days=90)
    assert ConsolidationPolicy.window(30, 10, now, since=now - timedelta(days=2)).retention == timedelta(days=30)
    assert ConsolidationPolicy.window(30, 10, now, all_sessions=True).retention == EVERYTHING
    assert ConsolidationPolicy.window(30, 10, now).limit == 10


class Files:
    def __init__(self, *files: NoteFile) -> None:
        self.files = list(files)

    def note_files(self) -> list[NoteFile]:
        return self.files


def test_notes_files_are_imported_once_and_applied_by_the_same_run(memory_store) -> None:
    files = Files(
        NoteFile("extensions/ad_hoc/notes/a.md", "Remember: this user uses pnpm.\n"),
        NoteFile("extensions/ad_hoc/notes/b.md", "Forget the staging password hint.\n"),
        NoteFile("extensions/ad_hoc/notes/c.md", None, "not a regular file"),
        NoteFile("extensions/ad_hoc/notes/d.md", "  \n"),
    )

    report = consolidate(memory_store, HeuristicConsolidator(), no_secrets, EVERY, note_files=files)

    assert report.status == "completed" and report.notes_imported is not None
    assert report.notes_imported.imported == ["extensions/ad_hoc/notes/a.md"]
    assert [s["reason"] for s in report.notes_imported.skipped] == [
        "a forget request: run `mnemolog forget` instead", "not a regular file", "empty",
    ]
    assert "this user uses pnpm." in active(memory_store)
    again = import_note_files(memory_store, files, no_secrets)
    assert again.imported == [] and again.already == ["extensions/ad_hoc/notes/a.md"]


def test_a_note_is_stored_redacted_and_without_forgotten_values(memory_store) -> None:
    noted = add_note(memory_store, "the password is hunter2", "remember", API, Replacing("hunter2")).note_id

    stored: Note = memory_store.app.repository.get(noted)
    assert stored.text == "the password is [REDACTED_SECRET]"
    with pytest.raises(ValueError, match="unknown note intent"):
        add_note(memory_store, "x", "forget", API, no_secrets)
    with pytest.raises(ValueError, match="needs some text"):
        add_note(memory_store, "   ", "remember", API, no_secrets)


def test_a_notes_file_says_its_intent_in_front_matter_or_its_first_word() -> None:
    assert note_file_intent("intent: correct\n---\nthe port is 8081") == "correct"
    assert note_file_intent("Correction: the port is 8081") == "correct"
    assert note_file_intent("Forget the hint") == "forget"
    assert note_file_intent("Use pnpm.") == "remember"


def test_notes_list_by_project_and_state(memory_store) -> None:
    api = note(memory_store, "Use pnpm.", scope=API)
    web = note(memory_store, "Use yarn.", scope=WEB)
    shared = note(memory_store, "Answer briefly.")
    run(memory_store)
    later = note(memory_store, "Use bun.", scope=API)
    reads = memory_store.reads()

    assert [n.note_id for n in reads.notes(API)] == [api, shared, later]
    assert [n.note_id for n in reads.notes()] == [api, web, shared, later]
    assert [n.note_id for n in reads.notes(API, include_done=False)] == [later]
    assert reads.note_sources() == {"cli"} and set(reads.note_ids()) == {api, web, shared, later}


def _add(text: str, *evidence: object, scope: str = API) -> Edit:
    return Edit(op="add", kind="knowledge", scope=scope, text=text, evidence=tuple(str(e) for e in evidence), reason="r")


def test_a_repaired_plan_replaces_a_refused_one(memory_store) -> None:
    session = extracted_session(memory_store, "s1", API, "Run make test before pushing.", updated_at=WHEN)
    refused = ConsolidationPlan(edits=(_add("Run make test.", session, scope=WEB),))  # a scope violation
    repaired = ConsolidationPlan(edits=(_add("Run make test.", session),))
    model = ScriptedConsolidator(refused, repaired)

    report = consolidate(memory_store, model, no_secrets, EVERY, fallback=HeuristicConsolidator())

    assert report.status == "completed" and report.added == 1 and report.repaired and report.fallback == ""
    assert report.planned_by == "scripted-consolidator"
    assert list(model.seen[1].repair.problems) == [
        f"edit 1: add (knowledge, scope {WEB}): scope {WEB} is not covered by its evidence (from {API})"
    ]
    events = [type(e).__name__ for e in memory_store.app.events.get(report.consolidation_id)]
    assert events == ["Started", "PlanRefused", "RepairRequested", "Completed"]


def test_the_first_plans_good_edits_stand_when_the_repair_is_worse(memory_store) -> None:
    session = extracted_session(memory_store, "s1", API, "Run make test before pushing.", updated_at=WHEN)
    first = ConsolidationPlan(edits=(_add("Run make test.", session), _add("Made up.", "session1")))
    model = ScriptedConsolidator(first, ConsolidationPlan(edits=(_add("Made up.", "session2"),)))

    report = consolidate(memory_store, model, no_secrets, EVERY, fallback=HeuristicConsolidator())

    assert report.status == "completed" and report.added == 1 and report.planned_by == "scripted-consolidator"
    assert [o.reason for o in report.overrides] == ["evidence names sessions that were not selected: session1"]
    assert [i.text for i in memory_store.reads().active_items()] == ["Run make test."]


def test_a_model_error_falls_back_without_a_repair_round(memory_store) -> None:
    extracted_session(memory_store, "s1", API, "Run make test before pushing.", updated_at=WHEN)
    model = ScriptedConsolidator(ModelError("m: answer cut off by the output token limit"))

    report = consolidate(memory_store, model, no_secrets, EVERY, fallback=HeuristicConsolidator())

    assert report.status == "completed" and report.planned_by == "heuristic" and not report.repaired
    assert report.fallback == "model error: m: answer cut off by the output token limit"
    assert "Run make test before pushing." in active(memory_store)
    events = [type(e).__name__ for e in memory_store.app.events.get(report.consolidation_id)]
    assert events == ["Started", "ModelFailed", "FellBack", "Completed"]


def test_without_a_fallback_a_model_error_fails_the_run(memory_store) -> None:
    report = run(memory_store, ScriptedConsolidator(ModelError("server down")))

    assert report.status == "failed" and report.detail == "model error: server down"
    events = [type(e).__name__ for e in memory_store.app.events.get(report.consolidation_id)]
    assert events == ["Started", "ModelFailed", "Failed"]


def test_a_clean_empty_plan_is_taken_as_is(memory_store) -> None:
    extracted_session(memory_store, "s1", API, "Run make test before pushing.", updated_at=WHEN)
    model = ScriptedConsolidator(ConsolidationPlan(edits=()))

    report = consolidate(memory_store, model, no_secrets, EVERY, fallback=HeuristicConsolidator())

    assert report.status == "completed" and report.added == 0 and report.fallback == "" and len(model.seen) == 1


# ------------------------------------------------------------------ notes that mean what they say (issue 25, point 5)


def test_a_note_no_item_of_its_scope_carries_stays_pending_whatever_the_model_planned(memory_store) -> None:
    noted = note(memory_store, "Use pnpm.")

    report = run(memory_store, ScriptedConsolidator(ConsolidationPlan(edits=())))

    assert report.status == "completed" and report.notes_applied == []
    assert [(n.note_id, n.state) for n in memory_store.reads().notes()] == [(noted, "pending")]
    applied = run(memory_store)  # the next run still sees it, and applies it
    assert applied.notes_applied == [noted] and [i.scope for i in memory_store.reads().active_items()] == [GLOBAL_SCOPE]


def test_a_global_note_merged_into_a_project_item_refuses_the_plan_and_stays_pending(memory_store) -> None:
    project_note = note(memory_store, "Prefer pnpm over npm", scope=API)
    run(memory_store)
    [item] = memory_store.reads().active_items()
    global_note = note(memory_store, "Prefer pnpm over npm")
    merged = ConsolidationPlan(
        edits=(Edit(op="revise", target="I1", kind="preference", scope=API, text=item.text, evidence=(str(project_note), str(global_note)), reason="same"),)
    )

    report = run(memory_store, ScriptedConsolidator(merged))

    assert report.status == "failed"
    assert [o.reason for o in report.overrides] == [f"notes of another scope are no evidence for an item of scope {API}: {global_note}"]
    assert {n.note_id: n.state for n in memory_store.reads().notes()} == {project_note: "applied", global_note: "pending"}


def test_the_offline_plan_gives_a_global_note_its_own_user_wide_item(memory_store) -> None:
    project_note = note(memory_store, "Prefer pnpm over npm", scope=API)
    run(memory_store)
    global_note = note(memory_store, "Prefer pnpm over npm")

    report = run(memory_store)

    assert report.notes_applied == [global_note]
    by_scope = {i.scope: i.evidence for i in memory_store.reads().active_items()}
    assert by_scope == {API: (project_note,), GLOBAL_SCOPE: (global_note,)}


def test_a_second_note_asking_the_same_is_evidence_too_so_the_item_outlives_either(memory_store) -> None:
    first = note(memory_store, "Prefer pnpm over npm", scope=API)
    run(memory_store)
    second = note(memory_store, "prefer pnpm over npm.", scope=API)

    report = run(memory_store)

    assert report.notes_applied == [second] and report.added == 0 and report.revised == 1
    [item] = memory_store.reads().active_items()
    assert set(item.evidence) == {first, second}
    assert withdraw_note(memory_store, str(first)).items_leaving == ()
    assert run(memory_store).retired == 0 and [i.item_id for i in memory_store.reads().active_items()] == [item.item_id]


def test_a_note_saying_it_holds_for_all_my_projects_is_recorded_user_wide_unless_a_scope_was_chosen(memory_store) -> None:
    text = "For all my projects: write commit messages in the imperative mood."

    wide = add_note(memory_store, text, "remember", API, no_secrets, scope_chosen=False)
    chosen = add_note(memory_store, text, "remember", API, no_secrets, scope_chosen=True)
    plain = add_note(memory_store, "Write commit messages in the imperative mood.", "remember", API, no_secrets, scope_chosen=False)

    assert (wide.scope, chosen.scope, plain.scope) == (GLOBAL_SCOPE, API, API)
    assert {n.note_id: n.scope for n in memory_store.reads().notes()} == {wide.note_id: GLOBAL_SCOPE, chosen.note_id: API, plain.note_id: API}
