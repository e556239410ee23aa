"""Phase 2: checked plans, applied as one transaction, rendered as Codex's folder."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent
from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.consolidation import Consolidation
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import session_id_for
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import fingerprint
from support.consolidating import render_into, rendered, run_consolidation
from support.folder_validator import validate_folder
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor, memory
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout

ALL = EligibilityPolicy(max_age=None)
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"


def raw(task: str, group: str, knowledge: str, preference: str = "") -> str:
    pref = f"Preference signals:\n- {preference}\n" if preference else ""
    return (
        f"---\ndescription: {task}\ntask: {task}\ntask_group: {group}\ntask_outcome: success\n"
        f"keywords: {group}, make\n---\n### Task 1\n{pref}Reusable knowledge:\n- {knowledge}\n"
    )


def build_sessions(folder: Path) -> dict[str, str]:
    """Three sessions in two projects; returns native id -> scope."""
    write_rollout(folder, thread_id(1), "Fix the retry test. Always run make test first.", remote="git@github.com:acme/api.git", when="2026-10-20T10:00:00.000Z")
    write_rollout(folder, thread_id(2), "Add the export endpoint.", remote="https://github.com/acme/api", when="2026-10-21T10:00:00.000Z")
    write_rollout(folder, thread_id(3), "Fix the login page. Always run make test first.", cwd="/home/dev/acme/web", remote="git@github.com:acme/web.git", when="2026-10-22T10:00:00.000Z")
    return {thread_id(1): API, thread_id(2): API, thread_id(3): WEB}


ANSWERS = {
    thread_id(1): memory("Fixed the flaky retry test.", raw("fix retry test", "api", "the retry suite needs REDIS_URL", "always run make test first")),
    thread_id(2): memory("Added /export.", raw("add export endpoint", "api", "exports stream CSV in chunks")),
    thread_id(3): memory("Fixed the login page.", raw("fix login page", "web", "the login form posts to /session", "always run make test first")),
}


def scripted_extractor() -> ScriptedExtractor:
    return ScriptedExtractor(default=lambda t: ANSWERS[t.meta.native_id])


def run_pipeline(store, folder: Path, consolidator=None):
    ingest_files(store, [folder], ALL)
    extract_all(store, scripted_extractor(), ALL)
    return run_consolidation(store, consolidator or HeuristicConsolidator(), all_sessions=True)


def export_log(store) -> list[dict]:
    return [
        {"originator_id": str(n.originator_id), "originator_version": n.originator_version, "topic": n.topic, "state": bytes(n.state).decode()}
        for n in store.app.recorder.select_notifications(start=1, limit=100_000)
    ]


def import_log(store, rows: list[dict]) -> None:
    store.app.recorder.insert_events(
        [StoredEvent(originator_id=UUID(r["originator_id"]), originator_version=r["originator_version"], topic=r["topic"], state=r["state"].encode()) for r in rows]
    )
    store.catch_up()


def test_a_fixed_log_renders_the_golden_folder(store_factory, tmp_path: Path) -> None:
    log_file = GOLDEN / "log_basic.jsonl"
    folder = GOLDEN / "folder_from_log"
    if os.environ.get("UPDATE_GOLDEN"):
        source = Path("/tmp/mnemolog-golden/sessions")  # a fixed path, since it is recorded in the log
        shutil.rmtree(source.parent, ignore_errors=True)
        build_sessions(source)
        builder = store_factory()
        assert run_pipeline(builder, source).status == "completed"
        log_file.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in export_log(builder)))
        shutil.rmtree(folder, ignore_errors=True)
        render_into(builder, folder)
        return
    store = store_factory()
    import_log(store, [json.loads(line) for line in log_file.read_text().splitlines()])

    files = render_into(store, tmp_path / "out")

    expected = {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}
    assert files == expected
    assert validate_folder(tmp_path / "out", count_tokens) == []


def test_rebuild_then_render_is_byte_identical(store_factory, tmp_path: Path) -> None:
    build_sessions(tmp_path / "s")
    store = store_factory()
    assert run_pipeline(store, tmp_path / "s").status == "completed"
    before = rendered(store)
    tables = store.reads().dump()

    store.rebuild()

    assert store.reads().dump() == tables
    assert rendered(store) == before


def items_of(store) -> dict[str, dict]:
    return {r["id"]: r for r in store.reads().dump()["items"]}


def test_code_retires_items_whose_evidence_is_gone(store_factory, tmp_path: Path) -> None:
    build_sessions(tmp_path / "s")
    store = store_factory()
    first = run_pipeline(store, tmp_path / "s")
    assert first.status == "completed" and first.added
    gone = session_id_for("codex", thread_id(2))
    only_from_gone = [r["id"] for r in items_of(store).values() if json.loads(r["evidence"]) == [str(gone)]]
    assert only_from_gone

    session = store.app.repository.get(gone)
    session.delete("the user deleted it")
    store.app.save_all(session)
    keeps_everything = ScriptedConsolidator(ConsolidationPlan(edits=()))  # the model leaves the items alone

    second = run_consolidation(store, keeps_everything, all_sessions=True)

    assert second.status == "completed"
    rows = items_of(store)
    assert all(rows[i]["status"] == "retired" for i in only_from_gone)
    for item_id in only_from_gone:
        retired = list(store.app.events.get(UUID(item_id)))[-1]
        assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.CODE
        assert retired.consolidation_id == second.consolidation_id
    completed = list(store.app.events.get(second.consolidation_id))[-1]
    assert isinstance(completed, Consolidation.Completed)
    assert {str(o.item_id) for o in completed.overrides if o.action == "retired"} >= set(only_from_gone)
    assert all("evidence" in o.reason for o in completed.overrides)
    assert second.diff_removed == 1


def bad_plans(store) -> dict[str, ConsolidationPlan]:
    api_session = str(session_id_for("codex", thread_id(1)))
    web_session = str(session_id_for("codex", thread_id(3)))
    return {
        "evidence from another project": ConsolidationPlan(edits=(
            Edit(op="add", kind="knowledge", scope=API, text="web login posts to /session", evidence=(web_session,), reason="r"),
        )),
        "unknown session": ConsolidationPlan(edits=(
            Edit(op="add", kind="knowledge", scope=API, text="fine", evidence=(api_session,), reason="r"),
            Edit(op="add", kind="knowledge", scope=API, text="x", evidence=("00000000-0000-4000-8000-000000000000",), reason="r"),
        )),
        "tombstoned value": ConsolidationPlan(edits=(
            Edit(op="add", kind="knowledge", scope=API, text="deploy with blue-falcon-42 token", evidence=(api_session,), reason="r"),
        )),
    }


@pytest.mark.parametrize("case", ["evidence from another project", "tombstoned value"])
def test_a_plan_that_breaks_a_rule_is_rejected_whole(store_factory, tmp_path: Path, case: str) -> None:
    build_sessions(tmp_path / "s")
    store = store_factory()
    run_pipeline(store, tmp_path / "s")
    digest, width = fingerprint(store.tombstone_key(), "blue-falcon-42")
    store.app.save_all(Tombstone(digest=digest, width=width, scope="global", reason="secret"))
    store.catch_up()
    before = store.reads().dump()["items"]

    result = run_consolidation(store, ScriptedConsolidator(bad_plans(store)[case]), all_sessions=True)

    assert result.status == "failed" and result.overrides
    assert all(o.action == "rejected" for o in result.overrides)
    assert store.reads().dump()["items"] == before
    failed = list(store.app.events.get(result.consolidation_id))[-1]
    assert isinstance(failed, Consolidation.Failed) and failed.rejected
    assert "blue-falcon" not in json.dumps([o.model_dump(mode="json") for o in failed.rejected])


def test_two_consolidations_at_once_one_runs_one_exits(store_factory, tmp_path: Path) -> None:
    build_sessions(tmp_path / "s")
    store = store_factory()
    run_pipeline(store, tmp_path / "s")
    other = store_factory()
    inside = threading.Event()
    release = threading.Event()

    def slow_plan(request):
        inside.set()
        release.wait(10)
        return ConsolidationPlan(edits=())

    results = {}
    first = threading.Thread(target=lambda: results.setdefault("first", run_consolidation(store, ScriptedConsolidator(default=slow_plan))))
    first.start()
    assert inside.wait(10)
    results["second"] = run_consolidation(other, ScriptedConsolidator(default=ConsolidationPlan(edits=())))
    release.set()
    first.join()

    assert results["second"].status == "busy" and "running" in results["second"].detail
    assert results["first"].status == "completed"
    assert run_consolidation(other, ScriptedConsolidator(default=ConsolidationPlan(edits=()))).status == "completed"


def test_secrets_in_a_plan_are_redacted_before_anything_is_stored(store_factory, tmp_path: Path) -> None:
    from support.raw_events import raw_log_contains

    build_sessions(tmp_path / "s")
    store = store_factory()
    run_pipeline(store, tmp_path / "s")
    secret = "ghp_" + "R8mT2vQx9LwZ4kPa7Nc3Yd6Hj1Fs5Ge0Ub2W"
    api_session = str(session_id_for("codex", thread_id(1)))
    plan = ConsolidationPlan(
        edits=(Edit(op="add", kind="knowledge", scope=API, title="CI token", text=f"CI pushes with token {secret}",
                    keywords=("ci",), evidence=(api_session,), reason="seen"),),
        user_profile=f"Keeps a token around: {secret}",
    )

    result = run_consolidation(store, ScriptedConsolidator(plan), all_sessions=True)

    assert result.status == "completed"
    completed = list(store.app.events.get(result.consolidation_id))[-1]
    assert completed.redactions == 2 and secret not in completed.user_profile
    assert not raw_log_contains(store, secret)
    texts = [r["text"] for r in store.reads().dump()["items"]]
    assert "CI pushes with token [REDACTED_SECRET]" in texts
