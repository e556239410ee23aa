"""Capture at session end, the waiting report, exec sessions, and the quiet SessionStart hook."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.cli import run_cli
from support.sessions import thread_id, write_rollout

DIRECTIVE = "Always format with ruff format before committing."


@pytest.fixture
def world(tmp_path: Path) -> dict:
    project = tmp_path / "api"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True)
    subprocess.run(["git", "remote", "add", "origin", "git@github.com:acme/api.git"], cwd=project, check=True)
    other = tmp_path / "web"
    other.mkdir()
    env = {"MNEMOLOG_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    rollout = write_rollout(tmp_path / "codex" / "sessions", thread_id(1), DIRECTIVE, cwd=str(project), when=now)
    return {"project": project, "other": other, "env": env, "rollout": rollout, "tmp": tmp_path}


def hook(world: dict, *args: str, cwd: Path) -> str:
    done = run_cli("context", "--hook", *args, env=world["env"], stdin=json.dumps({"cwd": str(cwd), "hook_event_name": "SessionStart"}))
    assert done.code == 0, done.err
    return done.out


def test_a_session_that_just_ended_is_captured_now_and_reaches_the_next_session(world: dict) -> None:
    assert hook(world, "--agent", "codex", "--json", cwd=world["project"]) == ""  # nothing remembered: nothing said

    ran = run_cli("run", env=world["env"])
    assert ran.code == 0, ran.err
    assert "1 sessions wait for the idle window" in ran.out and "becomes eligible at" in ran.out
    assert "0 extracted" in ran.out

    captured = run_cli("capture", "--hook", "--wait", "--agent", "codex", env=world["env"], stdin=json.dumps({"transcript_path": str(world["rollout"])}))
    assert captured.code == 0, captured.err
    assert "extract 1 extracted" in captured.out and "consolidate completed" in captured.out

    payload = json.loads(hook(world, "--agent", "codex", "--json", cwd=world["project"]))
    text = payload["hookSpecificOutput"]["additionalContext"]
    assert text.startswith("<mnemolog-memory>\n# Memory from earlier sessions (mnemolog)") and text.rstrip().endswith("</mnemolog-memory>")
    assert "ruff format" in text and "oai-mem-citation" in text and "search_memory" in text
    claude = hook(world, "--agent", "claude-code", cwd=world["project"])
    assert "ruff format" in claude and "mcp__mnemolog__search_memory" in claude and "oai-mem-citation" not in claude
    assert hook(world, "--agent", "claude-code", cwd=world["other"]) == ""  # another project: nothing


def test_exec_sessions_are_extracted_only_when_configured(world: dict) -> None:
    lines = world["rollout"].read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["source"] = "exec"
    world["rollout"].write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")

    default = run_cli("capture", str(world["rollout"]), env=world["env"])
    assert default.code == 0 and "extract 0 extracted" in default.out
    configured = run_cli("capture", str(world["rollout"]), env={**world["env"], "MNEMOLOG_EXTRACT_NONINTERACTIVE": "true"})
    assert configured.code == 0 and "extract 1 extracted" in configured.out


def test_capture_as_a_hook_returns_at_once_and_captures_in_the_background(world: dict) -> None:
    import time

    done = run_cli("capture", "--hook", "--agent", "codex", env=world["env"], stdin=json.dumps({"transcript_path": str(world["rollout"])}))
    assert done.code == 0 and done.out == "" and done.err == ""
    log = world["tmp"] / "data" / "logs" / "capture.log"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and " captured " not in (log.read_text() if log.exists() else ""):
        time.sleep(0.2)
    assert f"captured {world['rollout']} (codex)" in log.read_text()
    assert run_cli("capture", "--hook", env=world["env"], stdin="not json").code == 0  # a hook never fails its agent


def test_a_capture_that_finds_another_consolidation_running_waits_for_it_then_consolidates(world: dict) -> None:
    """Two sessions that end together: the second capture's phase 2 used to give up ("consolidate busy")."""
    import threading
    from datetime import timedelta
    from uuid import uuid4

    from mnemolog.adapters.processes import worker_name
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import open_store
    from mnemolog.domain.consolidation import PhaseTwoLease
    from mnemolog.domain.services.notes import add_note

    other = open_store(Settings(home=world["tmp"] / "data"))  # the process whose run holds the lease
    lease, run = PhaseTwoLease(), uuid4()
    lease.take(run, worker_name(), datetime.now(UTC), timedelta(minutes=30))
    other.app.save_all(lease)

    def end_the_run() -> None:  # and what it wrote meanwhile: a note the waiting capture must plan from
        add_note(other, "Always pin the CI image by its digest.", "remember", "git:github.com/acme/api", other.ports.redactor)
        held = other.app.repository.get(PhaseTwoLease.create_id())
        held.release(run)
        other.app.save_all(held)

    ends = threading.Timer(2.0, end_the_run)
    ends.start()
    try:
        captured = run_cli("capture", str(world["rollout"]), env=world["env"])
    finally:
        ends.join()
        other.close()
    assert captured.code == 0, captured.err
    assert "waiting for the consolidation running elsewhere to end" in captured.out
    assert "extract 1 extracted" in captured.out and "consolidate completed, 4 added" in captured.out
    remembered = hook(world, "--agent", "claude-code", cwd=world["project"])
    assert "ruff format" in remembered and "pin the CI image by its digest" in remembered


PAD_LINE = json.dumps({"timestamp": "2026-10-20T10:00:00.000Z", "type": "event_msg", "payload": {"type": "x", "pad": "p" * 5000}})
DEEP_LINE = json.dumps({"timestamp": "2026-10-20T10:00:00.000Z", "type": "event_msg", "payload": {"type": "x", "v": [[[[[[1]]]]]]}})
LIMIT_CASES = {
    # setting, the line added to the session, what ingest makes of it
    "max_line_bytes": ({"MNEMOLOG_MAX_LINE_BYTES": "1000"}, PAD_LINE, {"line too long": 1}),
    "max_nesting": ({"MNEMOLOG_MAX_NESTING": "4"}, DEEP_LINE, {"nested too deep": 1}),
    "max_file_bytes": ({"MNEMOLOG_MAX_FILE_BYTES": "4000"}, PAD_LINE, None),  # the whole file is left out
}


def _hook_capture(world: dict, env: dict[str, str]) -> tuple[int, dict]:
    done = run_cli("capture", "--hook", "--wait", "--json", env=env, stdin=json.dumps({"transcript_path": str(world["rollout"])}))
    return done.code, done.json()


@pytest.mark.parametrize("setting", list(LIMIT_CASES))
def test_the_session_end_hook_reads_within_the_configured_limits_as_ingest_does(world: dict, setting: str) -> None:
    limits, line, skipped = LIMIT_CASES[setting]
    with world["rollout"].open("a") as out:
        out.write(line + "\n")
    code, report = _hook_capture(world, {**world["env"], **limits})
    ingest = run_cli("ingest", str(world["rollout"]), "--all", "--json", env={**world["env"], **limits, "MNEMOLOG_HOME": str(world["tmp"] / "other")})
    by_ingest = ingest.json()
    if skipped is None:
        assert code == ingest.code == 3  # partial: the file was not read
        [error] = report["ingest"]["errors"]
        assert "max_file_bytes" in error["error"] and str(world["rollout"]) in error["path"]
        assert report["ingest"]["errors"] == by_ingest["errors"]
        assert report["extract"]["extracted"] == 0 and report["ingest"]["new"] == 0
    else:
        assert code == ingest.code == 0
        assert report["ingest"]["lines_skipped"] == by_ingest["lines_skipped"] == skipped
        assert report["ingest"]["warnings"] == by_ingest["warnings"] and len(report["ingest"]["warnings"]) == 1
        assert report["extract"]["extracted"] == 1  # the rest of the session is in memory


def test_capture_reads_each_session_file_once(world: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemolog.adapters import session_files

    reads: list[str] = []
    real = session_files.read_session

    def counted(path, **options):  # type: ignore[no-untyped-def]
        reads.append(str(path))
        return real(path, **options)

    monkeypatch.setattr(session_files, "read_session", counted)
    code, report = _hook_capture(world, world["env"])
    assert code == 0 and report["ingest"]["new"] == 1 and report["extract"]["extracted"] == 1
    assert reads == [str(world["rollout"])]

    # A session `run` recorded while it was still going: ingest finds its bytes unchanged, capture reads it once.
    second = write_rollout(world["tmp"] / "codex" / "sessions", thread_id(2), "Prefer uv over pip here.", cwd=str(world["project"]),
                           when=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    assert run_cli("ingest", str(second), env=world["env"]).code == 0
    reads.clear()
    done = run_cli("capture", str(second), "--json", env=world["env"])
    assert done.code == 0 and done.json()["ingest"]["unchanged"] == 1 and done.json()["extract"]["extracted"] == 1
    assert reads == [str(second)]
