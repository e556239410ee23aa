"""Every session learnt from, or a reason: a headless run is named as such, a VS Code rollout is learnt from (issue 25, point 4)."""

from __future__ import annotations

from pathlib import Path

from support.cli import run_cli
from support.sessions import thread_id, write_rollout
from unit.test_codex_event_prompts import vscode_rollout

HEADLESS = "not interactive (`codex exec`, `claude -p` or a subagent: set extract_noninteractive to learn from the first two)"


def test_a_headless_session_gives_its_reason_in_the_capture_log_and_in_status(tmp_path: Path) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    path = write_rollout(tmp_path / "s", thread_id(5), "Summarise the failing tests.", when="2026-11-30T10:00:00.000Z")
    path.write_text(path.read_text().replace('"source": "cli"', '"source": "exec"'))  # what `codex exec` records

    logged = run_cli("capture", str(path), env=env)
    assert logged.code == 0, logged.err
    assert f"codex {thread_id(5)}: ineligible ({HEADLESS})" in logged.out
    as_json = run_cli("capture", str(path), "--json", env=env).json()
    assert as_json["sessions"] == [{"agent": "codex", "session": thread_id(5), "state": "ineligible", "reasons": [HEADLESS]}]

    status = run_cli("status", "--json", env=env).json()
    reasons = {reason for group in status["groups"] for reason in group["reasons"]}
    assert HEADLESS in reasons


def test_a_vs_code_rollout_is_learnt_from_when_captured(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    path = vscode_rollout(tmp_path / "rollout.jsonl")
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    path.write_text(path.read_text().replace("2026-05-11", yesterday))  # within the default age window
    captured = run_cli("capture", str(path), "--json", env=env)
    assert captured.code == 0, captured.err
    (session,) = captured.json()["sessions"]
    assert session["state"] in ("extracted", "nothing"), session
    assert "no user message" not in session["reasons"]
