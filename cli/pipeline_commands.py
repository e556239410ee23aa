"""The pipeline commands: ingest, extract, consolidate, render, run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from mnemolog.cli.command_store import store
from mnemolog.cli.options import parse_since
from mnemolog.cli.output import Exit, PhaseDisplay, console, emit_json, errors, progress_bar

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store
    from mnemolog.domain.services import extract as extract_service
    from mnemolog.domain.services import ingest as ingest_service
    from mnemolog.domain.services.consolidate import ConsolidationReport
    from mnemolog.domain.services.pipeline import PipelinePolicy

JSON = typer.Option(False, "--json", help="Print a JSON summary.")
SINCE = typer.Option(None, "--since", help="Only sessions updated since DATE or DURATION (e.g. 2026-01-01, 30d).")
ALL = typer.Option(False, "--all", help="Ignore the age window (first import of a whole history).")
MODEL = typer.Option(None, "--model", help="Model name, or 'heuristic' for the offline models.")


def _policy(s: Store, since: str | None, all_: bool, workers: int | None = None) -> PipelinePolicy:
    """The pipeline's policies from the settings, widened by ``--since`` / ``--all``."""
    return s.ports.pipeline_policy(parse_since(since, s.clock()), all_, now=s.clock(), workers=workers)


def _roots(paths: list[Path]) -> list[Path]:
    """The paths given, else the agents' session folders (with a warning when there are none)."""
    from mnemolog.adapters.session_files import default_paths, default_session_roots

    roots = paths or default_paths()
    if not roots:
        looked = ", ".join(str(path) for _, path in default_session_roots(dict(os.environ)))
        errors.print(
            f"[yellow]warning:[/yellow] no session folders found (looked in {looked}); "
            "pass session files or folders, or set CODEX_HOME",
            highlight=False,
        )
    return roots


def _ingest(s: Store, paths: list[Path], since: str | None, all_: bool, quiet: bool) -> ingest_service.IngestReport:
    from mnemolog.domain.services.pipeline import ingest_sessions

    roots = _roots(paths)
    with progress_bar("ingest", enabled=not quiet) as bar:
        return ingest_sessions(s, s.ports.pipeline(), _policy(s, since, all_), roots, bar)


def _print_ingest(report: ingest_service.IngestReport) -> None:
    console.print(
        f"ingest: {report.files_read} files read; {report.new} new, {report.updated} updated, "
        f"{report.unchanged} unchanged; {report.redactions} secrets redacted"
        + (f"; {report.duplicate} duplicate copies of recorded sessions" if report.duplicate else "")
    )
    skipped = sum(report.lines_skipped.values())
    if skipped:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(report.lines_skipped.items()))
        console.print(f"  skipped {skipped} lines: {reasons}", highlight=False)
    from rich.markup import escape  # file names may hold brackets

    for note in report.warnings:
        errors.print(f"[yellow]warning:[/yellow] {escape(note)}", highlight=False)
    for problem in report.errors:
        errors.print(f"[yellow]warning:[/yellow] {escape(problem['error'])}", highlight=False)


def ingest(
    paths: list[Path] = typer.Argument(None, help="Session files or folders (default: ~/.codex and ~/.claude)."),
    since: str | None = SINCE,
    all_: bool = ALL,
    json_out: bool = JSON,
) -> None:
    """Read agent sessions into the log (incremental: unchanged files add nothing)."""
    with store() as s:
        report = _ingest(s, paths or [], since, all_, json_out)
    if json_out:
        emit_json(report.as_dict())
    else:
        _print_ingest(report)
    if report.partial:
        raise typer.Exit(int(Exit.PARTIAL))


def _extract(
    s: Store, model: str | None, limit: int | None, workers: int | None, quiet: bool, since: str | None = None, all_: bool = False,
    retry_failed: bool = False,
) -> tuple[extract_service.ExtractReport, str]:
    from mnemolog.domain.services.pipeline import extract_sessions, model_name

    ports = s.ports.pipeline(model)
    with progress_bar("extract", enabled=not quiet) as bar:
        report = extract_sessions(s, ports, _policy(s, since, all_, workers), bar, limit=limit, retry_failed=retry_failed)
    return report, model_name(ports.extractor)


def _print_failures(data: dict[str, Any]) -> None:
    """Why sessions failed, once per distinct reason, and what to do about it."""
    reasons: dict[str, int] = {}
    for failure in data["failures"]:
        reasons[failure["error"]] = reasons.get(failure["error"], 0) + 1
    for reason, count in reasons.items():
        errors.print(f"[yellow]warning:[/yellow] {count} session(s) failed: {escape_markup(reason)}", highlight=False)
    if data["gave_up"]:
        errors.print(
            "  fix the cause (e.g. the API key), then run `mnemolog extract --retry-failed`; `mnemolog status` shows every count",
            highlight=False,
        )


def escape_markup(text: str) -> str:
    """Text printed as is (rich would read ``[...]`` as markup)."""
    from rich.markup import escape

    return escape(text)


def extract(
    limit: int | None = typer.Option(None, "--limit", help="At most N sessions."),
    workers: int | None = typer.Option(None, "--workers", help="Parallel workers (default from config)."),
    model: str | None = MODEL,
    since: str | None = SINCE,
    all_: bool = ALL,
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Try again, now, the sessions whose extraction failed (e.g. after fixing the API key)."
    ),
    json_out: bool = JSON,
) -> None:
    """Phase 1: extract what is worth remembering from each eligible session."""
    with store() as s:
        report, name = _extract(s, model, limit, workers, json_out, since, all_, retry_failed)
    data = report.as_dict()
    if json_out:
        emit_json({**data, "model": name})
    else:
        retried = "retried failed sessions: " if retry_failed else ""
        console.print(
            f"extract ({name}): {retried}{data['extracted']} extracted, {data['nothing']} with nothing to keep, "
            f"{data['failed']} failed (will retry), {data['gave_up']} failed for good, {data['skipped']} skipped"
        )
        for failure in data["failures"]:
            errors.print(f"[yellow]warning:[/yellow] session {failure['session']}: {escape_markup(failure['error'])}", highlight=False)
        if data["gave_up"]:
            errors.print("  fix the cause (e.g. the API key), then run `mnemolog extract --retry-failed`", highlight=False)
        _print_waiting(data)
    if data["failed"] or data["gave_up"]:
        raise typer.Exit(int(Exit.PARTIAL))


def _print_waiting(data: dict[str, Any]) -> None:
    if data["waiting"]:
        when = str(data["next_eligible_at"])[:16].replace("T", " ")
        console.print(
            f"  {data['waiting']} sessions wait for the idle window (idle_hours); the next becomes eligible at {when} UTC",
            highlight=False,
        )


def _consolidate(
    s: Store, model: str | None, since: str | None = None, all_: bool = False, quiet: bool = False
) -> tuple[ConsolidationReport, str]:
    from mnemolog.domain.services.pipeline import consolidate_when_free, model_name

    display = PhaseDisplay(quiet)
    ports = s.ports.pipeline(model, display.streamed)
    # Codex's ad-hoc notes files in the memory folder are recorded first, so this run applies them.
    with display("consolidate"):
        report = consolidate_when_free(s, ports, _policy(s, since, all_))
    return report, model_name(ports.consolidator)


def _result_dict(result: ConsolidationReport, name: str) -> dict[str, Any]:
    return {**result.as_dict(), "model": name}


def consolidate(model: str | None = MODEL, since: str | None = SINCE, all_: bool = ALL, json_out: bool = JSON) -> None:
    """Phase 2: consolidate the selected extractions into memory items, as audited edits."""
    with store() as s:
        result, name = _consolidate(s, model, since, all_, json_out)
    if json_out:
        emit_json(_result_dict(result, name))
    else:
        _print_consolidation(result, name)
        _print_retention(result, s.settings.retention_days, all_ or since is not None)
    if result.status == "busy":
        raise typer.Exit(int(Exit.BUSY))
    if result.status == "failed":
        raise typer.Exit(int(Exit.ERROR))


def _print_consolidation(result: ConsolidationReport, name: str) -> None:
    for skip in result.notes_imported.skipped if result.notes_imported else ():
        errors.print(f"[yellow]notes file skipped[/yellow] {skip['file']}: {skip['reason']}", highlight=False)
    if result.status == "busy":
        errors.print(f"busy: another consolidation is running ({result.detail}); try again when it ends", highlight=False, markup=False)
        return
    if result.status == "failed":
        errors.print(f"[red]consolidation {result.consolidation_id} failed:[/red] {result.detail}", highlight=False)
        for o in result.overrides:
            errors.print(f"  rejected {o.edit}: {o.reason}", highlight=False)
        return
    notes = f"; {len(result.notes_applied)} notes applied" if result.notes_applied else ""
    console.print(
        f"consolidate ({name}): inputs +{result.diff_added} ~{result.diff_changed} -{result.diff_removed}; "
        f"items {result.added} added, {result.revised} revised, {result.retired} retired, {result.invalidated} invalidated{notes}"
    )
    if result.repaired:
        console.print("  repair round: the model got its plan back with the reasons and answered again")
    if result.fallback:
        console.print(f"  fallback: the offline consolidator planned this run ({result.fallback})", highlight=False, markup=False)
    for o in result.overrides:
        subject = o.edit if o.action == "rejected" else f"item {o.item_id}"
        console.print(f"  code {o.action} {subject}: {o.reason}", highlight=False, markup=False)


def _print_retention(result: ConsolidationReport, days: float, widened: bool) -> None:
    """A run never retires memory silently: which items left, why (the reason ``explain`` gives), and how to keep them."""
    if result.status != "completed" or not result.retired_items:
        return
    shown = ", ".join(str(i)[:8] for i in result.retired_items[:10]) + (" …" if len(result.retired_items) > 10 else "")
    why = (
        f"; {result.diff_removed} session(s) left the selection (the {days:g}-day retention window)" if result.diff_removed and not widened else ""
    )
    console.print(f"[yellow]retired {len(result.retired_items)} item(s)[/yellow]: {shown}{why}", highlight=False)
    for reason, count in retirement_reasons(result).items():
        console.print(f"  {count} item(s): {reason}", highlight=False, markup=False)
    console.print(
        "  they stay in the log (`mnemolog explain ID`); to keep items, pin or accept them (`mnemolog pin ID`, "
        "`mnemolog review ID --accept`), or widen the window (`run --all`, `--since DATE`, or MNEMOLOG_RETENTION_DAYS)",
        highlight=False,
    )


def retirement_reasons(result: ConsolidationReport) -> dict[str, int]:
    """How many items a run retired for each reason, in the words the log keeps (``explain`` shows the same)."""
    counts: dict[str, int] = {}
    for _, reason in result.retirements:
        counts[reason or "no reason given"] = counts.get(reason or "no reason given", 0) + 1
    return counts


def render(
    out: Path = typer.Option(None, "--out", help="Folder to write (default: the memory folder in MNEMOLOG_HOME)."),
    project: str | None = typer.Option(None, "--project", help="Only this project scope (plus global items)."),
    json_out: bool = JSON,
) -> None:
    """Render the memory folder (Codex's layout) from the projections."""
    from mnemolog.cli.memory_folder import write_memory_folder

    with store() as s:
        target = out or s.settings.folder
        files = write_memory_folder(s, target, project)
    if json_out:
        emit_json({"folder": str(target), "files": sorted(files)})
    else:
        console.print(f"rendered {len(files)} files into {target}")


def run(
    paths: list[Path] = typer.Argument(None, help="Session files or folders (default: ~/.codex and ~/.claude)."),
    since: str | None = SINCE,
    all_: bool = ALL,
    out: Path = typer.Option(None, "--out", help="Folder to write (default: MNEMOLOG_HOME/memories)."),
    json_out: bool = JSON,
) -> None:
    """The whole pipeline: ingest, extract, consolidate, render."""
    from mnemolog.adapters.models import OFFLINE, model_choice
    from mnemolog.cli.memory_folder import write_memory_folder
    from mnemolog.domain.services.pipeline import model_name, run_pipeline

    with store() as s:
        offline = [
            phase for phase in ("extract", "consolidate") if model_choice(s.settings, phase) == OFFLINE
        ]
        if offline and not json_out:
            console.print(
                f"no model API configured for {' and '.join(offline)}: using the offline heuristic models "
                "(set OPENAI_API_KEY or MNEMOLOG_EXTRACT_MODEL to use a language model)"
            )
        display = PhaseDisplay(json_out)
        ports = s.ports.pipeline(None, display.streamed)
        ran = run_pipeline(s, ports, _policy(s, since, all_), _roots(paths or []), phases=display)
        ingest_report, extract_report, result = ran.ingest, ran.extract, ran.consolidate
        extract_name, consolidate_name = model_name(ports.extractor), model_name(ports.consolidator)
        target = out or s.settings.folder
        files = write_memory_folder(s, target, None) if result.status != "failed" else {}
    partial = ingest_report.partial or extract_report.as_dict()["gave_up"] > 0
    if json_out:
        emit_json(
            {
                "ingest": ingest_report.as_dict(),
                "extract": {**extract_report.as_dict(), "model": extract_name},
                "consolidate": _result_dict(result, consolidate_name),
                "folder": str(target) if files else None,
                "files": sorted(files),
            }
        )
    else:
        _print_ingest(ingest_report)
        data = extract_report.as_dict()
        console.print(f"extract ({extract_name}): {data['extracted']} extracted, {data['nothing']} with nothing to keep, {data['failed'] + data['gave_up']} failed")
        _print_failures(data)
        _print_waiting(data)
        _print_consolidation(result, consolidate_name)
        _print_retention(result, s.settings.retention_days, all_ or since is not None)
        if files:
            console.print(f"memory folder: {target} ({len(files)} files)")
            console.print(f"  summary: {os.path.join(target, 'memory_summary.md')}")
    if result.status == "failed":
        raise typer.Exit(int(Exit.ERROR))
    if result.status == "busy":
        raise typer.Exit(int(Exit.BUSY))  # as documented: another consolidation holds the lease
    if partial:
        raise typer.Exit(int(Exit.PARTIAL))


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(ingest)
    app.command()(extract)
    app.command()(consolidate)
    app.command()(render)
    app.command()(run)
    app.command()(tokens)


def tokens(
    paths: list[Path] = typer.Argument(..., help="Session files or folders."),
    budget: int | None = typer.Option(None, "--budget", help="Token budget (default: extract_input_tokens)."),
    json_out: bool = JSON,
) -> None:
    """Tokens phase 1 sends per session, against Codex's plain serialisation; checks nothing important is lost."""
    from mnemolog.adapters.session_files import SessionReadError, discover
    from mnemolog.adapters.settings import load_settings
    from mnemolog.adapters.token_report import token_report
    from rich.table import Table

    limit = budget or load_settings().extract_input_tokens
    reports, problems = [], []
    for found in discover(paths):
        try:
            reports.append(token_report(found.path, limit))
        except SessionReadError as error:
            problems.append(str(error))
    if json_out:
        emit_json(
            {
                "budget": limit,
                "sessions": [{**r.__dict__, "ratio": round(r.ratio, 4), "lossless": r.lossless} for r in reports],
                "errors": problems,
            }
        )
    else:
        grid = Table("session", "codex plain", "mnemolog", "ratio", "user msgs kept", "error lines kept", box=None)
        for r in reports:
            grid.add_row(
                f"{r.source} {r.native_id[:36]}",
                str(r.plain_tokens),
                str(r.rendered_tokens),
                f"{r.ratio:.2f}",
                f"{r.user_messages_kept}/{r.user_messages}",
                f"{r.error_lines_kept}/{r.error_lines}",
            )
        console.print(grid)
        for problem in problems:
            errors.print(f"[yellow]warning:[/yellow] {problem}", highlight=False)
    if problems:
        raise typer.Exit(int(Exit.PARTIAL))
