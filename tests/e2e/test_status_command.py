"""Coverage and health: a model server answering 401, then fixed (issue 14, acceptance 5), through the CLI."""

from __future__ import annotations

from pathlib import Path

from mnemolog.domain.extraction import StageOneOutput
from support.cli import run_cli
from support.sessions import thread_id, write_rollout

ANSWER = StageOneOutput(
    rollout_summary="Fixed the retry test.",
    rollout_slug="retry-test",
    raw_memory="---\ndescription: retry\ntask: fix retry test\ntask_group: api\ntask_outcome: success\nkeywords: retry\n---\n"
    "### Task 1\nReusable knowledge:\n- the retry suite needs REDIS_URL\n",
)
API = "git:github.com/acme/api"


def test_run_says_why_extraction_failed_and_retry_failed_extracts_after_the_fix(tmp_path: Path, fake_openai) -> None:
    for n in (1, 2):
        write_rollout(tmp_path / "sessions", thread_id(n), f"Fix the retry test number {n} please")
    env = {
        "MNEMOLOG_HOME": str(tmp_path / "home"),
        "OPENAI_API_KEY": "sk-wrong-" + "x" * 24,
        "MNEMOLOG_EXTRACT_BASE_URL": fake_openai.base_url,
        "MNEMOLOG_EXTRACT_MODEL": "extract-model",
        "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic",
        "MNEMOLOG_MODEL_BACKOFF": "0.01",
    }
    for _ in range(2):
        fake_openai.queue(status=401, error_message="Incorrect API key provided")

    ran = run_cli("run", "--all", str(tmp_path / "sessions"), env=env)

    assert ran.code == 3, ran.out + ran.err  # partial: sessions failed
    assert "2 session(s) failed: extract-model: 401 Unauthorized from the model server: Incorrect API key provided" in ran.err
    assert "mnemolog extract --retry-failed" in ran.err
    status = run_cli("status", "--json", env=env)
    assert status.code == 0, status.err
    (group,) = status.json()["groups"]
    assert (group["agent"], group["project"]) == ("codex", API)
    assert {k: group[k] for k in ("seen", "eligible", "waiting", "extracted", "nothing", "failed")} == {
        "seen": 2, "eligible": 2, "waiting": 0, "extracted": 0, "nothing": 0, "failed": 2,
    }
    assert "401 Unauthorized" in group["last_error"]
    table = run_cli("status", env=env)
    assert table.code == 0 and "401 Unauthorized from the model server" in table.out and "--retry-failed" in table.out
    assert run_cli("extract", "--all", "--json", env=env).json()["sessions"] == 0  # a plain extract does not retry them

    fake_openai.queue(ANSWER)
    fake_openai.queue(ANSWER)
    retried = run_cli("extract", "--retry-failed", "--json", env={**env, "OPENAI_API_KEY": "sk-fixed-" + "y" * 24})

    assert retried.code == 0, retried.err
    assert retried.json()["extracted"] == 2 and retried.json()["sessions"] == 2
    total = run_cli("status", "--json", env=env).json()["total"]
    assert (total["seen"], total["extracted"], total["failed"], total["last_error"]) == (2, 2, 0, None)
    assert run_cli("status", "--project", "git:github.com/acme/other", "--json", env=env).json()["groups"] == []
