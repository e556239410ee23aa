"""Commands about the store itself: doctor, status, config, rebuild, follow."""

from __future__ import annotations

import contextlib
from dataclasses import asdict

import typer
from mnemolog.cli.context import store
from mnemolog.cli.output import console, emit_json

JSON = typer.Option(False, "--json", help="Print JSON instead of a table.")


def doctor(json_out: bool = JSON) -> None:
    """Which store is in use, where, how many events it holds, and whether projections are caught up."""
    with store() as s:
        events = s.app.max_notification_id()
        position = s.view.position(s.app.name)
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
    from mnemolog.adapters.settings import eligibility_policy
    from mnemolog.domain.services.status import coverage_report
    from rich.table import Table

    with store() as s:
        report = coverage_report(s, eligibility_policy(s.settings, None, False), project)
        events = s.app.max_notification_id()
        position = s.view.position(s.app.name)
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
        console.print(f"views at {s.view.position(s.app.name)} of {s.app.max_notification_id()} events")


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(doctor)
    app.command()(status)
    app.command()(config)
    app.command()(rebuild)
    app.command()(follow)
