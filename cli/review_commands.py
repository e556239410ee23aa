"""Reviewing memory: set an item's trust state (accepted items come first in context)."""

from __future__ import annotations

import getpass
from pathlib import Path

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, UserError, console, emit_json


def review(
    item: str = typer.Argument(..., help="An item id or a unique prefix of one (as list and search print it), or [item:<id>]."),
    accept: bool = typer.Option(False, "--accept", help="The item is right: it comes first in context."),
    reject: bool = typer.Option(False, "--reject", help="The item is wrong: it leaves the context and the folder."),
    doubt: bool = typer.Option(False, "--doubt", help="The item may be wrong: it comes after proposed items."),
    by: str | None = typer.Option(None, "--by", help="Who reviews (default: the login name)."),
    note: str = typer.Option("", "--note", help="Why, for the item's history."),
    cwd: Path | None = options.CWD,
    project_key: str | None = options.PROJECT,
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Accept, reject or doubt a memory item (a Reviewed event; explain shows it)."""
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.memory_item import Trust
    from mnemolog.domain.services import review as reviewing

    chosen = [verdict for verdict, given in ((Trust.ACCEPTED, accept), (Trust.REJECTED, reject), (Trust.DOUBTED, doubt)) if given]
    if len(chosen) != 1:
        raise UserError("give exactly one of --accept, --reject or --doubt", Exit.USAGE)
    project = options.project_of(cwd, project_key)
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        try:
            result = reviewing.review(s, item_id, chosen[0], by or getpass.getuser(), note, project=project)
        except reviewing.ItemNotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
    folder = followed_folder(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        state = "now" if result.changed else "already"
        console.print(f"item {item_id} is {state} {result.trust.value}{updated(s)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(review)
