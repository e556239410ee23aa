"""A weak model's plans, through the CLI and a scripted OpenAI-compatible server on loopback.

Each edit is checked on its own, the model gets one repair round with the
reasons, and when no usable edit remains the offline consolidator plans the
run; `audit` shows all of it.
"""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import session_id_for
from support.cli import run_cli
from support.fake_openai import FakeOpenAI
from support.sessions import thread_id, write_rollout

API = "git:github.com/acme/api"
ANSWER = StageOneOutput(
    rollout_summary="Fixed the retry test.",
    rollout_slug="retry-test",
    raw_memory="---\ndescription: retry\ntask: fix retry test\ntask_group: api\ntask_outcome: success\nkeywords: retry\n---\n"
    "### Task 1\nReusable knowledge:\n- the retry suite needs REDIS_URL\n- run make test before pushing\n",
)


def _env(tmp_path: Path, server: FakeOpenAI) -> dict[str, str]:
    return {
        "MNEMOLOG_HOME": str(tmp_path / "home"),
        "OPENAI_BASE_URL": server.base_url,
        "MNEMOLOG_EXTRACT_MODEL": "small-model",
        "MNEMOLOG_CONSOLIDATE_MODEL": "small-model",
        "MNEMOLOG_MODEL_BACKOFF": "0.01",
    }


def _add(text: str, *evidence: str) -> Edit:
    return Edit(op="add", kind="knowledge", scope=API, task_group="api", title=text[:20], text=text,
                keywords=("retry",), evidence=evidence, reason="seen in the session")


def test_good_edits_apply_and_the_audit_shows_the_rejected_ones_and_the_repair_round(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    write_rollout(tmp_path / "sessions", thread_id(1), "Fix the retry test please")
    session = str(session_id_for("codex", thread_id(1)))
    stranger = str(uuid4())
    plan = ConsolidationPlan(edits=(
        Edit(op="revise", target="I1", kind="knowledge", scope=API, text="There is no I1 yet.", evidence=(session,), reason="r"),
        _add("Deploys go through the staging cluster.", stranger),
        _add("The retry suite needs REDIS_URL.", session),
        _add("Run make test before pushing.", session),
    ))
    fake_openai.queue(ANSWER)
    fake_openai.queue(plan)
    fake_openai.queue(plan)  # the repair round: a deterministic model answers the same

    result = run_cli("run", "--all", "--json", str(tmp_path / "sessions"), env=_env(tmp_path, fake_openai))

    assert result.code == 0, result.err
    consolidated = result.json()["consolidate"]
    assert consolidated["status"] == "completed" and consolidated["items"]["added"] == 2
    assert consolidated["repair_round"] is True and consolidated["fallback"] is None
    repair = fake_openai.requests[2]
    assert [m["role"] for m in repair.messages] == ["system", "user", "assistant", "user"]
    assert "unknown item handle 'I1'" in repair.messages[3]["content"]
    assert f"evidence names sessions that were not selected: {stranger}" in repair.messages[3]["content"]
    memory = (tmp_path / "home" / "memories" / "MEMORY.md").read_text()
    assert "The retry suite needs REDIS_URL." in memory and "Run make test before pushing." in memory
    assert "staging cluster" not in memory and "There is no I1" not in memory

    audit = run_cli("audit", "--json", env=_env(tmp_path, fake_openai)).json()
    assert [(r["edit"], r["reason"]) for r in audit["rejected"]] == [
        (f"edit 1: revise I1 (knowledge, scope {API})", "unknown item handle 'I1'"),
        (f"edit 2: add (knowledge, scope {API})", f"evidence names sessions that were not selected: {stranger}"),
    ]
    assert [(r["round"], r["proposed"], len(r["rejected"])) for r in audit["rounds"]] == [(1, 4, 2), (2, 4, 2)]
    assert audit["repair"]["round"] == 2 and len(audit["repair"]["problems"]) == 2
    shown = run_cli("audit", env=_env(tmp_path, fake_openai))
    assert shown.code == 0
    assert "round 1 (small-model): 2 of 4 edit(s) rejected" in shown.out
    assert "rejected edit 1: revise I1" in shown.out and "repair round 2" in shown.out


def test_plans_unusable_twice_fall_back_to_the_offline_consolidator(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    write_rollout(tmp_path / "sessions", thread_id(1), "Fix the retry test please")
    fake_openai.queue(ANSWER)
    fake_openai.queue(ConsolidationPlan(edits=(
        Edit(op="revise", target="I1", text="revise what is not there", evidence=("session1",), reason="r"),
    )))
    fake_openai.queue(ConsolidationPlan(edits=(_add("The retry suite needs REDIS_URL.", "session1", "session2"),)))

    result = run_cli("run", "--all", "--json", str(tmp_path / "sessions"), env=_env(tmp_path, fake_openai))

    assert result.code == 0, result.err
    consolidated = result.json()["consolidate"]
    assert consolidated["status"] == "completed" and consolidated["items"]["added"] >= 1
    assert consolidated["planned_by"] == "heuristic" and consolidated["repair_round"] is True
    assert consolidated["fallback"].startswith("no usable edit")
    assert fake_openai.pending == 0
    memory = (tmp_path / "home" / "memories" / "MEMORY.md").read_text()
    assert "REDIS_URL" in memory

    audit = run_cli("audit", "--json", env=_env(tmp_path, fake_openai)).json()
    assert audit["status"] == "completed" and audit["model"] == "heuristic"
    assert audit["fallback"]["consolidator"] == "heuristic" and audit["fallback"]["reason"] == consolidated["fallback"]
    assert [len(r["rejected"]) for r in audit["rounds"]] == [1, 1]
    assert "the offline consolidator (heuristic) planned this run" in run_cli("audit", env=_env(tmp_path, fake_openai)).out


def test_an_answer_that_is_no_plan_at_all_falls_back_too(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    write_rollout(tmp_path / "sessions", thread_id(1), "Fix the retry test please")
    fake_openai.queue(ANSWER)
    fake_openai.queue('{"edits": [{"op": "add", "text": "unfinished')

    result = run_cli("run", "--all", "--json", str(tmp_path / "sessions"), env=_env(tmp_path, fake_openai))

    assert result.code == 0, result.err
    consolidated = result.json()["consolidate"]
    assert consolidated["planned_by"] == "heuristic" and "not valid ConsolidationPlan JSON" in consolidated["fallback"]
    audit = run_cli("audit", "--json", env=_env(tmp_path, fake_openai)).json()
    assert audit["rounds"][0]["error"].startswith("small-model: answer is not valid ConsolidationPlan JSON")
    assert audit["repair"] is None


def test_a_looping_answer_is_stopped_and_recorded(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    write_rollout(tmp_path / "sessions", thread_id(1), "Fix the retry test please")
    fake_openai.queue(ANSWER)
    fake_openai.queue('{"edits": [{"op": "add", "keywords": [' + '"retry", ' * 3000, finish_reason="length")

    result = run_cli("run", "--all", "--json", str(tmp_path / "sessions"), env=_env(tmp_path, fake_openai))

    assert result.code == 0, result.err
    audit = run_cli("audit", "--json", env=_env(tmp_path, fake_openai)).json()
    error = audit["rounds"][0]["error"]
    assert "the answer looped (the same 9 character(s) over and over); stopped after" in error
    assert audit["fallback"]["reason"].startswith("model error: small-model: the answer looped")
