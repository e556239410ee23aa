"""explain and audit read only the log: an item's story, a run's edits and overrides."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from mnemolog.domain.citation import Citation
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.services import forget as forgetting
from mnemolog.domain.session import Session, session_id_for
from support.consolidating import run_consolidation
from support.forgetting import ALL, API, clean_memory
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor, handle_for
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock

S1 = session_id_for("codex", thread_id(1))
S2 = session_id_for("codex", thread_id(2))
V1, V2, V3 = "Run make test before pushing.", "Run make test-all before pushing.", "Run make ci before pushing."


def _store(store_factory, tmp_path: Path):
    store = store_factory(clock=FixedClock())
    folder = tmp_path / "sessions"
    write_rollout(folder, thread_id(1), "Fix the retry test.", when="2026-10-20T10:00:00.000Z")
    write_rollout(folder, thread_id(2), "Add the export endpoint.", when="2026-10-21T10:00:00.000Z")
    ingest_files(store, [folder], ALL)
    extract_all(store, ScriptedExtractor(default=lambda t: clean_memory(int(t.meta.native_id[-2:], 16))), ALL)
    return store


def _run(store, plan):
    result = run_consolidation(store, ScriptedConsolidator(plan), all_sessions=True)
    return result


def _edit(op: str, text: str = "", target: str | None = None, evidence=(S1,), title: str = "Testing", **extra) -> Edit:
    return Edit(op=op, target=target, kind="knowledge", scope=API, task_group="api", title=title, text=text,
                keywords=("make",), evidence=tuple(str(e) for e in evidence), reason=f"{op} because", **extra)


def _mine(request) -> str:
    return handle_for(request, lambda i: i.title == "Testing")


def test_explain_tells_an_items_story_in_order(store_factory, tmp_path: Path) -> None:
    store = _store(store_factory, tmp_path)
    added = _run(store, ConsolidationPlan(edits=(_edit("add", V1),)))
    item_id = next(i.item_id for i in store.reads().active_items())
    r2 = _run(store, lambda req: ConsolidationPlan(edits=(_edit("revise", V2, _mine(req), evidence=(S1, S2)),)))
    r3 = _run(store, lambda req: ConsolidationPlan(edits=(_edit("revise", V3, _mine(req)),)))
    cited_at = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    store.app.save_all(Citation(item_ids=(item_id,), session_ids=(), citing_session="019a-later", cited_at=cited_at, source="cli"))
    ended = datetime(2026, 11, 3, tzinfo=UTC)
    r4 = _run(store, lambda req: ConsolidationPlan(edits=(_edit("invalidate", target=_mine(req), valid_from=ended),)))
    assert all(r.status == "completed" for r in (added, r2, r3, r4))

    found = store.history().explain(item_id, store.matcher())

    assert found is not None
    story = found.as_dict()
    assert story["item"] == str(item_id) and story["kind"] == "knowledge" and story["scope"] == API
    steps = [(h["action"], h["consolidation"]) for h in story["history"]]
    assert steps == [
        ("added", str(added.consolidation_id)),
        ("revised", str(r2.consolidation_id)),
        ("revised", str(r3.consolidation_id)),
        ("invalidated", str(r4.consolidation_id)),
    ]
    history = story["history"]
    assert history[0]["after"]["text"] == V1 and history[0]["before"] is None
    assert history[1]["before"]["text"] == V1 and history[1]["after"]["text"] == V2
    assert history[2]["before"]["text"] == V2 and history[2]["after"]["text"] == V3
    assert history[1]["evidence"] == sorted([str(S1), str(S2)])
    assert history[3]["valid_to"] == ended.isoformat() and history[3]["by"] == "model" and history[3]["reason"] == "invalidate because"
    assert [v["text"] for v in story["versions"]] == [V1, V2, V3]
    assert story["now"] == {"status": "invalidated", "trust": "proposed", "pinned": False, "title": "Testing", "text": V3,
                            "keywords": ["make"], "valid_to": ended.isoformat(), "version": 4}
    assert story["citations"]["count"] == 1 and story["citations"]["last"] == cited_at.isoformat()
    kinds = [t["action"] for t in story["timeline"]]
    assert kinds == ["added", "revised", "revised", "cited", "invalidated"]
    sessions = {s["session"]: s for s in story["sessions"]}
    assert set(sessions) == {str(S1), str(S2)}
    assert sessions[str(S1)]["agent"] == "codex" and sessions[str(S1)]["native_id"] == thread_id(1)
    assert sessions[str(S1)]["cwd"] == "/home/dev/acme/api" and sessions[str(S1)]["path"].endswith(".jsonl")
    assert sessions[str(S1)]["extractions"][0]["model"] == "scripted-extractor"
    assert [c["consolidation"] for c in story["consolidations"]] == [str(r.consolidation_id) for r in (added, r2, r3, r4)]
    # TEXT finds the item through a past version too
    assert store.history().find_items("make test-all")[0].item == str(item_id)


def test_explain_never_shows_a_forgotten_value(store_factory, tmp_path: Path) -> None:
    store = _store(store_factory, tmp_path)
    _run(store, ConsolidationPlan(edits=(_edit("add", "Deploy with blue-falcon-42 on staging."),)))
    item_id = store.reads().active_items()[0].item_id
    forgetting.forget_value(store, "blue-falcon-42", "global")
    found = store.history().explain(item_id, store.matcher())
    assert found is not None and "falcon" not in str(found)
    story = found.as_dict()
    assert story["versions"][0]["text"] == "Deploy with [forgotten] on staging."
    assert story["now"]["status"] == "retired" and story["tombstones"]


def test_audit_shows_code_retirements_and_rejections_with_reasons(store_factory, tmp_path: Path) -> None:
    store = _store(store_factory, tmp_path)
    first = _run(store, ConsolidationPlan(edits=(
        _edit("add", V1), _edit("add", "Exports stream CSV.", evidence=(S2,), title="CSV"),
    )))
    # S2 leaves memory behind the model's back; the model keeps its item and revises the other one.
    session: Session = store.app.repository.get(S2)
    session.delete("test")
    store.app.save_all(session)
    # The model keeps the orphaned item, revises the other one, and names an item that does not exist.
    second = _run(store, lambda req: ConsolidationPlan(edits=(
        _edit("revise", V2, _mine(req)), _edit("retire", target="I99"),
    )))
    assert second.status == "completed"

    found = store.history().audit(second.consolidation_id, store.matcher())

    assert found is not None
    report = found.as_dict()
    assert report["status"] == "completed" and report["model"] == "scripted-consolidator" and report["prompt_hash"] == "scripted"
    assert report["input_tokens"] == 20 and report["output_tokens"] == 8
    assert report["inputs"]["removed"] == [str(S2)] and report["inputs"]["added"] == []
    revise = next(e for e in report["edits"] if e["op"] == "revise")
    assert revise["before"]["text"] == V1 and revise["after"]["text"] == V2 and revise["by"] == "model"
    retired = [e for e in report["edits"] if e["op"] == "retire"]
    assert len(retired) == 1 and retired[0]["by"] == "code" and retired[0]["before"]["text"] == "Exports stream CSV."
    assert report["code_retired"] == [{"action": "retired", "item_id": retired[0]["item"], "edit": "",
                                       "reason": "all evidence is gone (deleted, pruned, polluted or withdrawn)"}]
    assert report["rejected"] == [{"action": "rejected", "item_id": None, "edit": f"edit 2: retire I99 (knowledge, scope {API})",
                                   "reason": "unknown item handle 'I99'"}]

    # An edit citing a session outside the selection is dropped on its own; the model gets one repair round.
    third = _run(store, lambda req: ConsolidationPlan(edits=(
        _edit("revise", V3, _mine(req)), _edit("add", "Exports stream CSV.", evidence=(S2,), title="CSV"),
    )))
    assert third.status == "completed" and third.revised == 1 and third.added == 0 and third.repaired
    third_audit = store.history().audit(third.consolidation_id, store.matcher())
    assert third_audit is not None
    audited = third_audit.as_dict()
    assert audited["status"] == "completed" and [e["op"] for e in audited["edits"]] == ["revise"]
    assert [r["edit"] for r in audited["rejected"]] == [f"edit 2: add (knowledge, scope {API})"]
    assert audited["rejected"][0]["reason"].startswith("evidence names sessions that were not selected")
    assert [(r["round"], len(r["rejected"]), r["refused"]) for r in audited["rounds"]] == [(1, 1, False), (2, 1, False)]
    assert audited["repair"] == {"round": 2, "problems": [f"edit 2: add (knowledge, scope {API}): " + audited["rejected"][0]["reason"]]}
    assert audited["fallback"] is None
    assert store.history().latest_run() == third.consolidation_id
    assert [r.consolidation for r in store.history().runs()] == [str(r.consolidation_id) for r in (first, second, third)]
    assert store.history().audit(UUID(int=1), store.matcher()) is None
