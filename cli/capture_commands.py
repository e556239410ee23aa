"""``mnemolog capture``: a finished session goes into memory now (the SessionEnd hook runs it).

As a hook (``--hook``) it reads the agent's JSON on stdin, starts itself in
the background for the session's transcript and returns at once: Codex gives
a SessionEnd hook 3 s, and an agent should not wait on phase 1. The
background run writes one line per session to ``$MNEMOLOG_HOME/logs/capture.log``
(and one more first when it waits for another process's consolidation to end).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, PhaseDisplay, UserError, console, emit_json, errors

LOG_NAME = "capture.log"


def _home() -> Path:
    # Cheap on purpose (the hook path): the same rule as adapters.settings.resolve_home.
    home = os.environ.get("MNEMOLOG_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("mnemolog"))


def capture_log() -> Path:
    """Where background captures report."""
    return _home() / "logs" / LOG_NAME


def _hook_transcript() -> Path | None:
    text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return None
    path = data.get("transcript_path") if isinstance(data, dict) else None
    return Path(path) if isinstance(path, str) and path else None


def _start_in_background(transcript: Path, agent: str | None) -> None:
    log = capture_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "mnemolog.cli", "capture", str(transcript)]
    if agent:
        command += ["--agent", agent]
    with log.open("ab") as out:
        # A session of its own: the agent may end its hook's process group when the hook returns.
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True)


def capture(
    paths: list[Path] = typer.Argument(None, help="Finished session files (Codex rollouts, Claude Code transcripts)."),
    hook: bool = typer.Option(False, "--hook", help="Run as a SessionEnd hook: read the agent's JSON on stdin and capture its transcript in the background."),
    agent: str | None = typer.Option(None, "--agent", help="The agent that ran the session (codex or claude-code), for the log."),
    wait: bool = typer.Option(False, "--wait", help="With --hook: capture in this process instead of the background."),
    json_out: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Put finished sessions into memory now: ingest, extract and consolidate them (the SessionEnd hook runs this)."""
    if hook and os.environ.get("MNEMOLOG_MODEL_CALL"):
        return  # an agent CLI mnemolog runs as a model (adapters/agent_cli_models.py): never memory
    if hook:
        transcript = _hook_transcript()
        if transcript is None:
            return  # no transcript named: nothing to capture, and a hook must not fail the agent
        if not wait:
            _start_in_background(transcript, agent)
            return
        paths = [transcript]
    if not paths:
        raise UserError("name the session files to capture (or use --hook)", Exit.USAGE)
    report = _capture(paths)
    if json_out:
        emit_json(report)
    else:
        _print(report, agent)
    if report["ingest"]["partial"]:
        raise typer.Exit(int(Exit.PARTIAL))


def _capture(paths: list[Path]) -> dict[str, Any]:
    from dataclasses import replace
    from datetime import timedelta

    from mnemolog.domain.services.pipeline import model_name, run_pipeline
    from mnemolog.domain.services.status import session_outcomes

    def waiting(detail: str) -> None:
        console.print(f"capture: waiting for the consolidation running elsewhere to end ({detail})", highlight=False, markup=False, soft_wrap=True)

    with store() as s:
        display = PhaseDisplay(quiet=True)
        ports = s.ports.pipeline(None, display.streamed, cite=True, store=s)
        # The agent said the sessions ended: no idle window; while another run consolidates, wait for it.
        policy = s.ports.pipeline_policy(now=s.clock(), sessions_ended=True, wait_while_busy=True)
        ran = run_pipeline(s, ports, policy, paths, phases=display, on_wait=waiting)
        consolidated = ran.consolidate
        gave = session_outcomes(s, ran.ended, replace(policy.eligibility, idle=timedelta(0)))
    for problem in ran.ingest.errors:
        errors.print(f"warning: {problem['error']}", highlight=False, markup=False, soft_wrap=True)
    return {
        "paths": [str(p) for p in paths],
        "ingest": ran.ingest.as_dict(),
        "citations": ran.citations,
        "sessions": [outcome.as_dict() for outcome in gave],
        "extract": {**ran.extract.as_dict(), "model": model_name(ports.extractor)},
        "consolidate": {
            "status": consolidated.status, "added": consolidated.added, "revised": consolidated.revised,
            "retired": consolidated.retired, "retirements": [{"item": str(i), "reason": r} for i, r in consolidated.retirements],
            "model": model_name(ports.consolidator),
        },
    }


def _print(report: dict[str, Any], agent: str | None) -> None:
    from datetime import UTC, datetime

    ingest, extract, consolidate = report["ingest"], report["extract"], report["consolidate"]
    console.print(
        f"{datetime.now(UTC).isoformat(timespec='seconds')} captured {', '.join(report['paths'])}"
        f"{f' ({agent})' if agent else ''}: ingest {ingest['new']} new, {ingest['updated']} updated, {ingest['unchanged']} unchanged; "
        f"{report['citations']} citations; extract {extract['extracted']} extracted, {extract['nothing']} with nothing to keep, "
        f"{extract['failed'] + extract['gave_up']} failed; consolidate {consolidate['status']}, "
        f"{consolidate['added']} added, {consolidate['revised']} revised, {consolidate['retired']} retired",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for retired in consolidate["retirements"]:  # the reason explain gives, in the same words
        console.print(f"  retired {retired['item'][:8]}: {retired['reason']}", highlight=False, markup=False, soft_wrap=True)
    for session in report["sessions"]:  # why a session gave memory nothing, in the agent's own id
        if session["state"] not in ("extracted",):
            why = f" ({'; '.join(session['reasons'])})" if session["reasons"] else ""
            console.print(f"  {session['agent']} {session['session']}: {session['state']}{why}", highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(capture)
