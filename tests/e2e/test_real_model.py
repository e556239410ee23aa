"""The pipeline with a real (small) model: llama.cpp's server and SmolLM2-135M-Instruct on loopback.

A 135M model writes weak memory, so the test asserts what a real model
reliably gives: the run completes (exit 0 or 3), every answer parses or fails
with a recorded reason, the folder renders, a forgotten value stays out; and
`doctor --model` reports the server, schema support and speed.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from support.cli import run_cli
from support.llama_server import RealModelServer
from support.shared_fixtures import shared_fixture

SESSIONS = (  # two interactive sessions phase 1 takes: Codex (0.125) and Claude Code (2.0.76)
    "codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    "claude-code/sample_main_transcript.jsonl",
)
FORGOTTEN = "opencode"  # 1,245 times in the Codex session, and in its memory unless forgotten


def _env(tmp_path: Path, server: RealModelServer) -> dict[str, str]:
    return {
        "MNEMOLOG_HOME": str(tmp_path / "home"),
        "OPENAI_BASE_URL": server.base_url,
        "MNEMOLOG_EXTRACT_MODEL": server.model,
        "MNEMOLOG_CONSOLIDATE_MODEL": server.model,
        "MNEMOLOG_EXTRACT_INPUT_TOKENS": "1500",  # a small share of the 4,096-token context: a fast test
        "MNEMOLOG_MODEL_MAX_OUTPUT_TOKENS": "384",
        "MNEMOLOG_MODEL_RETRIES": "0",
    }


def test_the_pipeline_with_a_real_small_model(tmp_path: Path, real_model_server: RealModelServer) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for rel in SESSIONS:
        shutil.copy(shared_fixture(rel), sessions / Path(rel).name)  # a temporary copy, never in the repository
    env = _env(tmp_path, real_model_server)
    assert run_cli("forget", FORGOTTEN, env=env, stdin="y\n").code == 0  # "y" answers a confirmation, if asked
    started = time.monotonic()

    result = run_cli("run", "--all", "--json", str(sessions), env=env)

    seconds = time.monotonic() - started
    print(f"real-model pipeline: {seconds:.1f} s")
    assert result.code in (0, 3), result.out + result.err
    report = result.json()
    extracted = report["extract"]
    assert extracted["sessions"] == len(SESSIONS)
    assert extracted["extracted"] + extracted["nothing"] + extracted["failed"] + extracted["gave_up"] == len(SESSIONS)
    assert all(f["error"] for f in extracted["failures"])  # a failed answer says why
    consolidated = report["consolidate"]
    assert consolidated["status"] == "completed", consolidated["detail"]
    audit = run_cli("audit", "--json", env=env).json()
    for round_ in audit["rounds"]:  # every rejected edit or failed answer carries its reason
        assert round_.get("error") or all(r["reason"] for r in round_["rejected"])
    if consolidated["planned_by"] == "heuristic":
        assert consolidated["fallback"] and audit["fallback"]["reason"] == consolidated["fallback"]
    folder = Path(report["folder"])
    assert (folder / "MEMORY.md").is_file() and (folder / "memory_summary.md").is_file()
    for path in folder.rglob("*.md"):
        assert FORGOTTEN not in path.read_text().lower(), path
    found = run_cli("search", FORGOTTEN, "--json", env=env).json()
    assert found["hits"] == []


def test_doctor_model_against_the_real_server(tmp_path: Path, real_model_server: RealModelServer) -> None:
    result = run_cli("doctor", "--model", "--json", env=_env(tmp_path, real_model_server))

    assert result.code == 0, result.out + result.err
    probe = result.json()["models"][1]
    assert probe["server"]["kind"] == "llama.cpp" and probe["server"]["context_window"] == 4096
    assert real_model_server.model in probe["server"]["models"]
    assert probe["schema_honoured"] is True  # llama.cpp turns the JSON schema into a grammar
    assert probe["tokens_per_second"] > 0 and probe["output_tokens"] > 0
    assert probe["settings"]["input_budget"] == 1500 and probe["settings"]["stream"] is True
