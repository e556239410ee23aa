"""Commands about the store itself: doctor, config, rebuild."""

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
    app.command("status", help="Same as doctor.")(doctor)
    app.command()(config)
    app.command()(rebuild)
    app.command()(follow)
