"""Forgetting commands: forget, lift, prune, reset. Each change is an event; the value is never echoed."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Any

import typer
from mnemolog.cli import options
from mnemolog.cli.context import store
from mnemolog.cli.output import Exit, UserError, console, emit_json

JSON = typer.Option(False, "--json", help="Print a JSON summary.")


MIN_VALUE = 3  # shorter values match too much (`forget a` once retired 3 items and scrubbed 9 sessions)


def _short_id(reference: str) -> bool:
    """Whether ``reference`` may be a short (prefix) id: hex digits and dashes, 4 or more."""
    text = reference.strip().lower()
    return len(text) >= 4 and all(c in "0123456789abcdef-" for c in text)


def _on_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def _preview_line(preview: Any) -> str:
    """What a preview says the command would do, as a verb phrase ("retire 2 item(s), scrub 3 session(s)")."""
    parts = [f"retire {len(preview.retired)} item(s)"]
    if preview.deleted_session:
        parts.insert(0, f"delete session {preview.deleted_session}")
    if preview.action in ("forget-value", "forget-item"):
        parts.append(f"scrub {len(preview.scrubbed_sessions)} session(s)")
        if preview.scrubbed_notes:
            parts.append(f"scrub {preview.scrubbed_notes} note(s)")
    if preview.action == "prune":
        parts.insert(0, f"prune {len(preview.pruned_sessions)} extraction(s)")
    return ", ".join(parts)


def forget(
    value: str | None = typer.Argument(None, help="The value to forget ('-' reads it from stdin). Never stored or printed."),
    project: str | None = typer.Option(None, "--project", help="Only in this project: a scope key (git:host/owner/repo, path:/dir) or a directory."),
    global_: bool = typer.Option(False, "--global", help="Everywhere (the default)."),
    session: str | None = typer.Option(
        None, "--session", help="Delete this session (its id, the agent's own, e.g. a Codex thread id, or a unique prefix); its sole-evidence items retire."
    ),
    item: str | None = typer.Option(None, "--item", help="Retire this item (its id or a unique prefix) and tombstone its text."),
    reason: str = typer.Option("forgotten at the user's request", "--reason", help="Why (stored; must not contain the value)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be retired and scrubbed; write nothing."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation (a terminal asks first)."),
    force: bool = typer.Option(False, "--force", help=f"Forget a value shorter than {MIN_VALUE} characters."),
    erase: bool = typer.Option(
        False, "--erase", help="Also make VALUE unreadable in the whole store, past events included (destroys the data keys of every text that carried it; cannot be undone)."
    ),
    json_out: bool = JSON,
) -> None:
    """Forget for good: a value (tombstone), a session or an item. Enforced by code at every read and write."""
    from mnemolog.adapters.scope import resolve_scope
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services import forget as forgetting
    from mnemolog.domain.services import previews

    chosen = [name for name, given in (("VALUE", value is not None), ("--session", session), ("--item", item)) if given]
    if len(chosen) != 1:
        raise UserError("give exactly one of VALUE, --session ID or --item ID", Exit.USAGE)
    if project and global_:
        raise UserError("--project and --global exclude each other", Exit.USAGE)
    text = ""
    if value is not None:
        text = (sys.stdin.read() if value == "-" else value).strip()
        if len(text) < MIN_VALUE and not force:
            raise UserError(
                f"the value is shorter than {MIN_VALUE} characters: it would match too much (give --force to forget it anyway)",
                Exit.USAGE,
            )
    if erase:
        if value is None:
            raise UserError("--erase takes a VALUE", Exit.USAGE)
        if project:
            raise UserError("--erase reaches the whole store: it takes no --project", Exit.USAGE)
        _erase(text, reason, yes=yes, dry_run=dry_run, json_out=json_out)
        return
    ask = not yes and not dry_run and value != "-" and _on_terminal()
    with store() as s:
        uow = s
        scope = resolve_scope(project, global_)
        if session:
            reference = session.strip()
            if s.reads().resolve_session(reference) is None and _short_id(reference):
                reference = str(options.resolve_id(s.reads(), "sessions", reference))
        elif item:
            item_id = options.resolve_id(s.reads(), "items", item)
        try:  # the preview is computed only to print it or to ask
            if not (dry_run or ask):
                preview = None
            elif session:
                preview = previews.preview_forget_session(uow, reference)
            elif item:
                preview = previews.preview_forget_item(uow, item_id)
            else:
                preview = previews.preview_forget_value(uow, text, scope)
        except forgetting.NotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
        except ValueError as error:
            raise UserError("the value has no words to match", Exit.USAGE) from error
        if dry_run and preview is not None:
            data = preview.as_dict()
            message = f"dry run: forget would {_preview_line(preview)}; nothing was written"
            for row in preview.retired:
                message += f"\n  would retire {str(row.item_id)[:8]}  {row.kind}  {row.scope}"
            if json_out:
                emit_json(data)
            else:
                console.print(message, highlight=False, markup=False)
            return
        if ask and preview is not None and not typer.confirm(f"Forget for good? This will {_preview_line(preview)}.", default=False, err=True):
            raise UserError("forget cancelled: nothing was written")
        if session:
            try:
                done = forgetting.forget_session(uow, reference)
            except forgetting.NotFound as error:
                raise UserError(str(error), Exit.NOT_FOUND) from error
            data = done.as_dict()
            message = f"session {done.session_id} {'deleted' if done.deleted else 'was already deleted'}; {len(done.retired)} item(s) retired"
        elif item:
            try:
                forgot = forgetting.forget_item(uow, item_id)
            except forgetting.NotFound as error:
                raise UserError(str(error), Exit.NOT_FOUND) from error
            except ValueError as error:
                raise UserError(f"the item has no text to tombstone: {error}") from error
            data = forgot.as_dict()
            message = f"item {forgot.item_id} retired; tombstone {forgot.tombstone_id} placed on its text; {len(forgot.also_retired)} other item(s) retired"
        else:
            try:
                result = forgetting.forget_value(uow, text, scope, reason)
            except ValueError as error:
                raise UserError("the value has no words to match", Exit.USAGE) from error
            data = result.as_dict()
            state = "was already in force" if result.already else "placed"
            message = (
                f"tombstone {result.tombstone_id} {state} (scope {scope}); {len(result.retired)} item(s) retired, "
                f"{len(result.scrubbed_sessions)} session(s) scrubbed"
            )
    folder = followed_folder(s)
    data["folder"] = str(folder) if folder else None
    message += updated(s)
    if json_out:
        emit_json(data)
    else:
        console.print(message, highlight=False)


def _erase(value: str, reason: str, *, yes: bool, dry_run: bool, json_out: bool) -> None:
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services.erase import ERASE_REASON, erase_value

    if not value.strip():
        raise UserError("the value has no words to match", Exit.USAGE)
    if not (yes or dry_run) and not typer.confirm(  # asked on stderr: --json output stays JSON
        "Erase this value from the whole store, past events included? This cannot be undone", default=False, err=True
    ):
        raise UserError("erase cancelled: nothing was written")
    with store() as s:
        given = reason if reason != "forgotten at the user's request" else ERASE_REASON
        try:
            result = erase_value(s, value, s.keys, s, given, dry_run=dry_run)
        except ValueError as error:
            raise UserError("the value has no words to match", Exit.USAGE) from error
    folder = followed_folder(s)
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
            f"{kinds} re-recorded under new keys, {result.keys_destroyed} old key(s) destroyed; views rebuilt{updated(s)}",
            highlight=False,
        )
    if result.unsealed_events:
        console.print(
            f"[yellow]warning:[/yellow] {result.unsealed_events} event(s) recorded before sealing hold the value in clear and cannot be erased",
            highlight=False,
        )


def lift(
    tombstone: str = typer.Argument(..., help="The tombstone id (from `forget` or `list tombstones`), or a unique prefix."),
    reason: str = typer.Option("lifted at the user's request", "--reason"),
    json_out: bool = JSON,
) -> None:
    """Undo a tombstone (as an event) and restore the session texts and notes it scrubbed. Retired items stay retired."""
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services import forget as forgetting

    with store() as s:
        tid = options.resolve_id(s.reads(), "tombstones", tombstone)
        try:
            result = forgetting.lift(s, tid, reason)
        except forgetting.NotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
    folder = followed_folder(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        restored = f"; {len(result.restored_sessions)} session(s) and {len(result.restored_notes)} note(s) restored"
        console.print(f"tombstone {tid} {'lifted' if result.lifted else 'was already lifted'}{restored}{updated(s)}", highlight=False)


def prune(
    days: float | None = typer.Option(None, "--days", help="Retention window in days (default from config: 30)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be pruned and retired; write nothing."),
    json_out: bool = JSON,
) -> None:
    """The retention sweep: prune stale, unselected extractions; retire items left without evidence."""
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services import previews, retention

    with store() as s:
        window = timedelta(days=s.settings.retention_days if days is None else days)
        if dry_run:
            preview = previews.preview_prune(s, retention=window, limit=s.settings.max_selected)
            if json_out:
                emit_json(preview.as_dict())
            else:
                console.print(f"dry run: prune would {_preview_line(preview)}; nothing was written", highlight=False)
                for row in preview.retired:
                    console.print(f"  would retire {str(row.item_id)[:8]}  {row.kind}  {row.scope}", highlight=False, markup=False)
            return
        result = retention.prune(s, retention=window, limit=s.settings.max_selected)
    folder = followed_folder(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        console.print(f"prune: {len(result.sessions)} extraction(s) pruned, {len(result.retired)} item(s) retired{updated(s)}", highlight=False)


def reset(
    yes: bool = typer.Option(False, "--yes", help="Do not ask for confirmation."),
    json_out: bool = JSON,
) -> None:
    """Withdraw all memory, as events (the log and its history stay)."""
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services import retention

    if not yes and not typer.confirm("Withdraw all memory (every extraction and every item)?", default=False):
        raise UserError("reset cancelled")
    with store() as s:
        result = retention.reset(s)
    folder = followed_folder(s)
    if json_out:
        emit_json({**result.as_dict(), "folder": str(folder) if folder else None})
    else:
        console.print(f"reset: {len(result.sessions)} extraction(s) withdrawn, {len(result.retired)} item(s) retired{updated(s)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(forget)
    app.command()(lift)
    app.command()(prune)
    app.command()(reset)
