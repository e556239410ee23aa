"""Forgetting commands: forget, lift, prune, reset. Each change is an event; the value is never echoed."""

from __future__ import annotations

import sys
from datetime import timedelta
from uuid import UUID

import typer
from mnemolog.cli.context import store
from mnemolog.cli.output import Exit, UserError, console, emit_json

JSON = typer.Option(False, "--json", help="Print a JSON summary.")


def _uuid(value: str, what: str) -> UUID:
    try:
        return UUID(value.strip())
    except ValueError as error:
        raise UserError(f"not a {what} id: {value.strip()[:40]!r}", Exit.USAGE) from error


def forget(
    value: str | None = typer.Argument(None, help="The value to forget ('-' reads it from stdin). Never stored or printed."),
    project: str | None = typer.Option(None, "--project", help="Only in this project: a scope key (git:host/owner/repo, path:/dir) or a directory."),
    global_: bool = typer.Option(False, "--global", help="Everywhere (the default)."),
    session: str | None = typer.Option(
        None, "--session", help="Delete this session (its id or the agent's own, e.g. a Codex thread id); its sole-evidence items retire."
    ),
    item: str | None = typer.Option(None, "--item", help="Retire this item and tombstone its text."),
    reason: str = typer.Option("forgotten at the user's request", "--reason", help="Why (stored; must not contain the value)."),
    erase: bool = typer.Option(
        False, "--erase", help="Also make VALUE unreadable in the whole store, past events included (destroys the data keys of every text that carried it; cannot be undone)."
    ),
    yes: bool = typer.Option(False, "--yes", help="With --erase: do not ask for confirmation."),
    dry_run: bool = typer.Option(False, "--dry-run", help="With --erase: say what would be erased, change nothing."),
    json_out: bool = JSON,
) -> None:
    """Forget for good: a value (tombstone), a session or an item. Enforced by code at every read and write."""
    from mnemolog.adapters.scope import resolve_scope
    from mnemolog.cli.memory_folder import follow_log, updated
    from mnemolog.domain.services import forget as forgetting

    chosen = [name for name, given in (("VALUE", value is not None), ("--session", session), ("--item", item)) if given]
    if len(chosen) != 1:
        raise UserError("give exactly one of VALUE, --session ID or --item ID", Exit.USAGE)
    if project and global_:
        raise UserError("--project and --global exclude each other", Exit.USAGE)
    if (yes or dry_run) and not erase:
        raise UserError("--yes and --dry-run go with --erase", Exit.USAGE)
    if erase:
        if value is None:
            raise UserError("--erase takes a VALUE", Exit.USAGE)
        if project:
            raise UserError("--erase reaches the whole store: it takes no --project", Exit.USAGE)
        text = sys.stdin.read() if value == "-" else value
        _erase(text.strip(), reason, yes=yes, dry_run=dry_run, json_out=json_out)
        return
    with store() as s:
        uow = s
        if session:
            try:
                done = forgetting.forget_session(uow, session.strip())
            except forgetting.NotFound as error:
                raise UserError(str(error), Exit.NOT_FOUND) from error
            data = done.as_dict()
            message = f"session {done.session_id} {'deleted' if done.deleted else 'was already deleted'}; {len(done.retired)} item(s) retired"
        elif item:
            try:
                forgot = forgetting.forget_item(uow, _uuid(item, "item"))
            except forgetting.NotFound as error:
                raise UserError(str(error), Exit.NOT_FOUND) from error
            except ValueError as error:
                raise UserError(f"the item has no text to tombstone: {error}") from error
            data = forgot.as_dict()
            message = f"item {forgot.item_id} retired; tombstone {forgot.tombstone_id} placed on its text; {len(forgot.also_retired)} other item(s) retired"
        else:
            text = sys.stdin.read() if value == "-" else (value or "")
            scope = resolve_scope(project, global_)
            try:
                result = forgetting.forget_value(uow, text.strip(), scope, reason)
            except ValueError as error:
                raise UserError("the value has no words to match", Exit.USAGE) from error
            data = result.as_dict()
            state = "was already in force" if result.already else "placed"
            message = (
                f"tombstone {result.tombstone_id} {state} (scope {scope}); {len(result.retired)} item(s) retired, "
                f"{len(result.scrubbed_sessions)} session(s) scrubbed"
            )
        folder = follow_log(s)
    data["folder"] = str(folder) if folder else None
    message += updated(folder)
    if json_out:
        emit_json(data)
    else:
        console.print(message, highlight=False)


def _erase(value: str, reason: str, *, yes: bool, dry_run: bool, json_out: bool) -> None:
    from mnemolog.cli.memory_folder import follow_log, updated
    from mnemolog.domain.services.erase import ERASE_REASON, erase_value

    if not value.strip():
        raise UserError("the value has no words to match", Exit.USAGE)
    if not (yes or dry_run) and not typer.confirm(
        "Erase this value from the whole store, past events included? This cannot be undone", default=False
    ):
        raise UserError("erase cancelled")
    with store() as s:
        given = reason if reason != "forgotten at the user's request" else ERASE_REASON
        try:
            result = erase_value(s, value, s.keys, s, given, dry_run=dry_run)
        except ValueError as error:
            raise UserError("the value has no words to match", Exit.USAGE) from error
        folder = None if dry_run else follow_log(s)
    data = {**result.as_dict(), "folder": str(folder) if folder else None}
    if json_out:
        emit_json(data)
        return
    kinds = ", ".join(f"{n} {kind}(s)" for kind, n in result.erased.items()) or "nothing"
    if dry_run:
        console.print(f"erase would re-record {kinds} under new keys and destroy the old ones (tombstone {result.tombstone_id})", highlight=False)
    else:
        console.print(
            f"erased: tombstone {result.tombstone_id} placed (scope global); {len(result.retired)} item(s) retired; "
            f"{kinds} re-recorded under new keys, {result.keys_destroyed} old key(s) destroyed; views rebuilt{updated(folder)}",
            highlight=False,
        )
    if result.unsealed_events:
        console.print(
            f"[yellow]warning:[/yellow] {result.unsealed_events} event(s) recorded before sealing hold the value in clear and cannot be erased",
            highlight=False,
        )


def lift(
    tombstone: str = typer.Argument(..., help="The tombstone id (from `forget`)."),
    reason: str = typer.Option("lifted at the user's request", "--reason"),
    json_out: bool = JSON,
) -> None:
    """Undo a tombstone (as an event) and restore the session texts and notes it scrubbed. Retired items stay retired."""
    from mnemolog.cli.memory_folder import follow_log, updated
    from mnemolog.domain.services import forget as forgetting

    tid = _uuid(tombstone, "tombstone")
    with store() as s:
        try:
            result = forgetting.lift(s, tid, reason)
        except forgetting.NotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
        folder = follow_log(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        restored = f"; {len(result.restored_sessions)} session(s) and {len(result.restored_notes)} note(s) restored"
        console.print(f"tombstone {tid} {'lifted' if result.lifted else 'was already lifted'}{restored}{updated(folder)}", highlight=False)


def prune(
    days: float | None = typer.Option(None, "--days", help="Retention window in days (default from config: 30)."),
    json_out: bool = JSON,
) -> None:
    """The retention sweep: prune stale, unselected extractions; retire items left without evidence."""
    from mnemolog.cli.memory_folder import follow_log, updated
    from mnemolog.domain.services import retention

    with store() as s:
        window = timedelta(days=s.settings.retention_days if days is None else days)
        result = retention.prune(s, retention=window, limit=s.settings.max_selected)
        folder = follow_log(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        console.print(f"prune: {len(result.sessions)} extraction(s) pruned, {len(result.retired)} item(s) retired{updated(folder)}", highlight=False)


def reset(
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    json_out: bool = JSON,
) -> None:
    """Withdraw all memory, as events (the log and its history stay)."""
    from mnemolog.cli.memory_folder import follow_log, updated
    from mnemolog.domain.services import retention

    if not yes and not typer.confirm("Withdraw all memory (every extraction and every item)?", default=False):
        raise UserError("reset cancelled")
    with store() as s:
        result = retention.reset(s)
        folder = follow_log(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        console.print(f"reset: {len(result.sessions)} extraction(s) withdrawn, {len(result.retired)} item(s) retired{updated(folder)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(forget)
    app.command()(lift)
    app.command()(prune)
    app.command()(reset)
