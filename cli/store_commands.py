"""Commands about the store itself: doctor, status, config, rebuild, follow."""

from __future__ import annotations

import contextlib
from dataclasses import asdict

import typer
from mnemolog.cli.command_store import store
from mnemolog.cli.output import console, emit_json

JSON = typer.Option(False, "--json", help="Print JSON instead of a table.")


def doctor(
    json_out: bool = JSON,
    model: bool = typer.Option(
        False, "--model", help="Check the configured models instead: one small structured request each; "
        "reports the server, the model, whether the JSON schema was honoured, and tokens per second."
    ),
) -> None:
    """Which store is in use, where, how many events it holds, and whether projections are caught up."""
    if model:
        _doctor_model(json_out)
        return
    with store() as s:
        events = s.log_position()
        position = s.views_position()
        counts = s.reads().counts()
        report = {
            "backend": s.backend,
            "location": s.location,
            "events": events,
            "projection_position": position,
            "caught_up": position >= events,
            "counts": asdict(counts),
        }
    if json_out:
        emit_json(report)
        return
    console.print(f"store      {report['backend']} at {report['location']}")
    console.print(f"events     {events}")
    state = "[green]caught up[/green]" if report["caught_up"] else f"[yellow]{events - position} behind[/yellow]"
    console.print(f"views      at {position} ({state})")
    console.print(
        f"memory     {counts.sessions} sessions, {counts.active_items} active items of {counts.items}, "
        f"{counts.consolidations} consolidations, {counts.tombstones} tombstones, {counts.notes} notes"
    )


def status(
    project: str | None = typer.Option(None, "--project", help="Only this project (a scope key, as list and doctor print)."),
    json_out: bool = JSON,
) -> None:
    """Coverage and health: sessions seen, eligible, waiting (until when), extracted, with nothing, failed (and why), per agent and project."""
    from mnemolog.domain.services.status import coverage_report
    from rich.table import Table

    with store() as s:
        report = coverage_report(s, s.ports.eligibility(), project)
        events = s.log_position()
        position = s.views_position()
    data = {**report.as_dict(), "store": {"backend": s.backend, "events": events, "caught_up": position >= events}}
    if json_out:
        emit_json(data)
        return
    if not report.groups:
        console.print("no sessions recorded yet: run `mnemolog run` (or `ingest`) to read your agents' sessions")
        return
    grid = Table("agent", "project", "seen", "eligible", "waiting", "extracted", "nothing", "failed", "ineligible", "excluded", box=None)
    for g in (*report.groups, report.total):
        waiting = str(g.waiting)
        if g.waiting and g.waiting_until is not None:
            waiting += f" (until {g.waiting_until.isoformat()[:16].replace('T', ' ')})"
        elif g.ready:
            waiting += " (ready)"
        failed = f"[red]{g.failed}[/red]" if g.failed else "0"
        grid.add_row(
            g.agent, g.project, str(g.seen), str(g.eligible), waiting, str(g.extracted), str(g.nothing), failed,
            str(g.ineligible), str(g.excluded),
        )
    console.print(grid)
    for g in report.groups:
        if g.last_error:
            console.print(f"[yellow]last error[/yellow] {g.agent} {g.project}: {escape_markup(g.last_error)}", highlight=False)
    if report.total.failed:
        console.print(
            f"{report.total.failed} session(s) failed: fix the cause (e.g. the API key), then `mnemolog extract --retry-failed`",
            highlight=False,
        )


def escape_markup(text: str) -> str:
    """Text printed as is (rich would read ``[...]`` as markup)."""
    from rich.markup import escape

    return escape(text)


def _doctor_model(json_out: bool) -> None:
    """``doctor --model``: probe each phase's model (once per server and model)."""
    from mnemolog.adapters.model_probe import probe, probe_backend
    from mnemolog.adapters.models import (
        OFFLINE,
        OPENAI,
        model_choice,
        model_endpoint,
        model_fit,
        split_model,
    )
    from mnemolog.adapters.settings import load_settings
    from mnemolog.cli.output import Exit

    settings = load_settings()
    reports: list[dict[str, object]] = []
    seen: dict[tuple[str, str | None], dict[str, object]] = {}
    for phase in ("extract", "consolidate"):
        name = model_choice(settings, phase)
        if name == OFFLINE:
            reports.append({"phase": phase, "model": OFFLINE, "offline": True})
            continue
        base_url, key = model_endpoint(settings, phase, name)
        if (name, base_url) in seen:
            reports.append({**seen[(name, base_url)], "phase": phase})
            continue
        backend, bare = split_model(name)
        if backend == OPENAI:
            found = probe(phase, bare, base_url, key, settings.model_timeout)
        else:
            found = probe_backend(phase, name, settings)
        found.fit = model_fit(settings, phase, name=name).as_dict()
        seen[(name, base_url)] = found.as_dict()
        reports.append(found.as_dict())
    if json_out:
        emit_json({"models": reports})
    else:
        for r in reports:
            _print_probe(r)
    probed = [r for r in reports if not r.get("offline")]
    if any(not r["answered"] for r in probed):
        raise typer.Exit(int(Exit.ERROR))
    if any(not r["schema_honoured"] for r in probed):
        raise typer.Exit(int(Exit.PARTIAL))


def _print_probe(r: dict[str, object]) -> None:
    if r.get("offline"):
        console.print(f"{r['phase']:<12} offline heuristic model (no server to check)", highlight=False)
        return
    server = r["server"] if isinstance(r["server"], dict) else {}
    fit = r["settings"] if isinstance(r["settings"], dict) else {}
    if "command" in server:  # an agent CLI
        console.print(f"{r['phase']:<12} model {r['model']} through the {server['command']} CLI", highlight=False, markup=False)
        found = f"{server['path']} ({server.get('version') or 'version unknown'})" if server.get("found") else "not found on PATH"
        signed = f"signed in ({server.get('sign_in')})" if server.get("signed_in") else "not signed in"
        console.print(f"  cli        {found}; {signed}", highlight=False, markup=False)
    else:
        where = r["base_url"] or ("the Anthropic API" if server.get("kind") == "anthropic" else "the OpenAI API")
        console.print(f"{r['phase']:<12} model {r['model']} at {where}", highlight=False, markup=False)
        console.print(f"  server     {server.get('kind')}; models: {', '.join(server.get('models') or []) or '(not listed)'}", highlight=False, markup=False)
    window = fit.get("context_window") or "unknown (set model_context_tokens)"
    console.print(
        f"  settings   context window {window}; input budget {fit.get('input_budget')}; "
        f"output cap {fit.get('max_output_tokens')}; stream {'on' if fit.get('stream') else 'off'}",
        highlight=False, markup=False,
    )
    if not r["answered"]:
        console.print(f"  request    [red]failed[/red]: {escape_markup(str(r['error']))}", highlight=False, emoji=False)
        return
    honoured = "[green]yes[/green]" if r["schema_honoured"] else f"[yellow]no[/yellow] ({escape_markup(str(r['error']))})"
    console.print(f"  schema     JSON schema honoured: {honoured}", highlight=False, emoji=False)
    rate = r["tokens_per_second"]
    speed = f"{rate} tokens/s" if rate is not None else "unknown (no token count)"
    console.print(f"  speed      {speed}; {r['output_tokens']} tokens in {r['seconds']} s", highlight=False, markup=False)


def config(json_out: bool = JSON) -> None:
    """The effective configuration and where each value came from (secrets masked)."""
    from mnemolog.adapters.settings import describe, load_settings
    from rich.table import Table

    rows = describe(load_settings())
    if json_out:
        emit_json({name: {"value": value, "source": source} for name, value, source in rows})
        return
    grid = Table("setting", "value", "from", box=None)
    for name, value, source in rows:
        grid.add_row(name, value, source)
    console.print(grid)


def rebuild(json_out: bool = JSON) -> None:
    """Drop every projection and replay the whole log."""
    with store(catch_up=False) as s:
        replayed = s.rebuild()
    if json_out:
        emit_json({"replayed": replayed})
    else:
        console.print(f"rebuilt the projections from {replayed} events")


def follow(
    timeout: float | None = typer.Option(None, "--timeout", help="Stop after this many seconds (default: until Ctrl-C)."),
    interval: float = typer.Option(1.0, "--interval", help="Seconds between polls (SQLite)."),
) -> None:
    """Keep the projections up to date while other processes write (LISTEN/NOTIFY on PostgreSQL, polling on SQLite)."""
    with store() as s:
        console.print(f"following the log of {s.backend} at {s.location} (Ctrl-C to stop)")
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is the normal way to stop
            s.follow(timeout=timeout, interval=interval)
        console.print(f"views at {s.views_position()} of {s.log_position()} events")


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(doctor)
    app.command()(status)
    app.command()(config)
    app.command()(rebuild)
    app.command()(follow)
