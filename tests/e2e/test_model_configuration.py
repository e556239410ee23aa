"""The CLI talks to an OpenAI-compatible server as configured: OPENAI_* and per-phase settings."""

from __future__ import annotations

from pathlib import Path

from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import session_id_for
from support.cli import run_cli
from support.sessions import thread_id, write_rollout

ANSWER = StageOneOutput(
    rollout_summary="Fixed the retry test.",
    rollout_slug="retry-test",
    raw_memory="---\ndescription: retry\ntask: fix retry test\ntask_group: api\ntask_outcome: success\nkeywords: retry\n---\n"
    "### Task 1\nReusable knowledge:\n- the retry suite needs REDIS_URL\n",
)


def test_run_uses_the_configured_server_for_both_phases(tmp_path: Path, fake_openai) -> None:
    write_rollout(tmp_path / "sessions", thread_id(1), "Fix the retry test please")
    session = str(session_id_for("codex", thread_id(1)))
    fake_openai.queue(ANSWER)
    fake_openai.queue(ConsolidationPlan(edits=(
        Edit(op="add", kind="knowledge", scope="git:github.com/acme/api", task_group="api", title="Retry suite",
             text="The retry suite needs REDIS_URL.", keywords=("retry",), evidence=(session,), reason="seen"),
    )))
    env = {
        "MNEMOLOG_HOME": str(tmp_path / "home"),
        "OPENAI_API_KEY": "sk-test-" + "x" * 24,
        "OPENAI_BASE_URL": "http://127.0.0.1:9/unused",  # the per-phase settings below win
        "MNEMOLOG_EXTRACT_BASE_URL": fake_openai.base_url,
        "MNEMOLOG_EXTRACT_MODEL": "extract-model",
        "MNEMOLOG_CONSOLIDATE_BASE_URL": fake_openai.base_url,
        "MNEMOLOG_CONSOLIDATE_MODEL": "consolidate-model",
        "MNEMOLOG_MODEL_BACKOFF": "0.01",
        "MNEMOLOG_MODEL_SCHEMA": "full",  # a local base URL would get the compact plan schema
    }

    result = run_cli("run", "--all", "--json", str(tmp_path / "sessions"), env=env)

    assert result.code == 0, result.err
    report = result.json()
    assert report["extract"]["model"] == "extract-model" and report["extract"]["extracted"] == 1
    assert report["consolidate"]["model"] == "consolidate-model" and report["consolidate"]["items"]["added"] == 1
    assert [r.model for r in fake_openai.requests] == ["extract-model", "consolidate-model"]
    assert all(r.headers.get("authorization") == "Bearer " + env["OPENAI_API_KEY"] for r in fake_openai.requests)
    summary = (tmp_path / "home" / "memories" / "MEMORY.md").read_text()
    assert "The retry suite needs REDIS_URL." in summary
