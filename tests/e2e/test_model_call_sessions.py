"""A session of mnemolog's own model call (``claude -p`` / ``codex exec`` run as a model) never becomes memory.

The CLIs are told not to write one; these tests cover the case where one is
written anyway (an older CLI, a flag ignored): its prompt starts with
``MODEL_CALL_MARKER`` and ingest skips it. And mnemolog's hooks, should a CLI
run them for such a call, return at once: nothing served, nothing captured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemolog.domain.model_calls import MODEL_CALL_MARKER
from support.agent_sessions import ClaudeSession, CodexRollout
from support.cli import run_cli

PROMPT = f"{MODEL_CALL_MARKER}\n\nSession metadata (recorded by the agent):\nAlways run make lint-zz8 before you push."


def test_ingest_never_records_a_marked_session(tmp_path: Path) -> None:
    start = datetime.now(UTC) - timedelta(days=2)
    folder = tmp_path / "sessions"
    ClaudeSession(1, start, str(tmp_path)).user(PROMPT).say('{"rollout_summary": "x"}').write(folder)
    CodexRollout(2, start, str(tmp_path), None).user(PROMPT).say('{"rollout_summary": "x"}').write(folder)
    ClaudeSession(3, start, str(tmp_path)).user("Use make lint-zz8 here, please.").say("Sure.").write(folder)
    env = {"MNEMOLOG_HOME": str(tmp_path / "store")}

    done = run_cli("ingest", str(folder), "--json", env=env)

    assert done.code == 0, done.err
    report = done.json()
    assert report["model_calls"] == 2 and report["new"] == 1 and report["files_read"] == 3


def test_the_hooks_return_at_once_for_a_model_call(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "MNEMOLOG_HOME": str(tmp_path / "store"), "MNEMOLOG_MODEL_CALL": "1",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    given = json.dumps({"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
                        "hook_event_name": "SessionStart", "source": "startup"})
    store = {"MNEMOLOG_HOME": str(tmp_path / "store")}
    assert run_cli("note", "the release train leaves on Fridays", "--scope", "global", env=store).code == 0
    assert run_cli("consolidate", env=store).code == 0  # a global item: any session start would be served it

    for command in ("context --hook --json --agent claude-code", "capture --hook --agent claude-code"):
        done = subprocess.run(["bash", "-c", f"mnemolog {command}"], input=given, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", (command, done.stdout, done.stderr)
    told = run_cli("history", "--session", "s1", "--json", env=store)
    assert told.json()["servings"] == []
    assert not (tmp_path / "store" / "logs" / "capture.log").exists()
