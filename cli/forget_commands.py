"""Forgetting commands: forget, lift, prune, reset. Each change is an event; the value is never echoed."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Any

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, UserError, console, emit_json, errors

JSON = typer.Option(False, "--json", help="Print a JSON summary.")


MIN_VALUE = 3  # shorter values match too much (`forget a` once retired 3 items and scrubbed 9 sessions)


def _short_id(reference: str) -> bool:
    """Whether ``reference`` may be a short (prefix) id: hex digits and dashes, 4 or more."""
    text = reference.strip().lower()
    return len(text) >= 4 and all(c in "0123456789abcdef-" for c in text)


def _on_terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def checked_value(text: str, force: bool) -> str:
    """``text`` stripped, refused when shorter than ``MIN_VALUE`` characters unless ``force``."""
    text = text.strip()
    if len(text) < MIN_VALUE and not force:
        raise UserError(
            f"the value is shorter than {MIN_VALUE} characters: it would match too much (give --force to forget it anyway)",
            Exit.USAGE,
        )
    return text


def plan_line(plan: Any) -> str:
    """What a plan will do, as a verb phrase ("retire 2 item(s), scrub 3 session(s), scrub 1 note(s)")."""
    plan = getattr(plan, "forget", plan)  # an erase: its forget
    plan = getattr(plan, "value", plan)  # an item's forget: that of its text
    parts = [f"retire {len(plan.retired)} item(s)"]
    if plan.action == "forget-session":
        parts.insert(0, f"delete session {plan.session_id}")
    if plan.action in ("forget-value", "forget-item"):
        parts.append(f"scrub {len(plan.sessions)} session(s)")
        if plan.notes:
            parts.append(f"scrub {len(plan.notes)} note(s)")
        if plan.profiles:
            parts.append(f"scrub {len(plan.profiles)} user profile(s)")
    if plan.action in ("prune", "reset"):
        parts.insert(0, f"{'prune' if plan.action == 'prune' else 'withdraw'} {len(plan.sessions)} extraction(s)")
    return ", ".join(parts)


def plan_lines(plan: Any) -> list[str]:
    """Everything a plan changes, one line each: ids, kinds and scopes, never a value or a stored text."""
    plan = getattr(plan, "forget", plan)
    plan = getattr(plan, "value", plan)
    lines = [f"  retire {str(r.item_id)[:8]}  {r.kind}  {r.scope}  ({r.why})" for r in plan.retired]
    if plan.action in ("forget-value", "forget-item"):
        lines += [f"  scrub session {s}" for s in plan.sessions]
        lines += [f"  scrub note {n}" for n in plan.notes]
        lines += [f"  scrub the user profile of run {r}" for r in plan.profiles]
    if plan.action in ("prune", "reset"):
        lines += [f"  {plan.action} the extraction of session {s}" for s in plan.sessions]
    return lines


def show_dry_run(plan: Any, json_out: bool, command: str = "forget") -> None:
    """Print ``plan`` as a dry run: its JSON, or its line and every change it lists."""
    if json_out:
        emit_json(plan.as_dict())
        return
    message = "\n".join([f"dry run: {command} would {plan_line(plan)}; nothing was written", *plan_lines(plan)])
    console.print(message, highlight=False, markup=False)


def confirm_plan(
    plan: Any, question: str = "Forget for good?", cancelled: str = "forget cancelled: nothing was written", *, shown: int | None = None
) -> None:
    """Show the changes ``plan`` lists (the first ``shown``, when given), then ask on stderr (--json output stays JSON).

    A no raises UserError.
    """
    lines = plan_lines(plan)
    for line in lines[:shown]:
        errors.print(line, highlight=False, markup=False)
    if shown is not None and len(lines) > shown:
        errors.print(f"  … and {len(lines) - shown} more", highlight=False, markup=False)
    if not typer.confirm(f"{question} This will {plan_line(plan)}.", default=False, err=True):
        raise UserError(cancelled)


def planned(plan: Any, *, dry_run: bool, ask: bool, json_out: bool) -> bool:
    """A dry run prints ``plan`` (False: do not apply); on a terminal the user is asked first. True: apply it."""
    if dry_run:
        show_dry_run(plan, json_out)
        return False
    if ask:
        confirm_plan(plan)
    return True


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

    chosen = [name for name, given in (("VALUE", value is not None), ("--session", session), ("--item", item)) if given]
    if len(chosen) != 1:
        raise UserError("give exactly one of VALUE, --session ID or --item ID", Exit.USAGE)
    if project and global_:
        raise UserError("--project and --global exclude each other", Exit.USAGE)
    text = ""
    if value is not None:
        text = checked_value(sys.stdin.read() if value == "-" else value, force)
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
        try:  # one scan: the plan printed, asked about and applied is the same object
            if session:
                plan: Any = forgetting.plan_forget_session(uow, reference)
            elif item:
                plan = forgetting.plan_forget_item(uow, item_id)
            else:
                plan = forgetting.plan_forget_value(uow, text, scope, reason)
        except forgetting.NotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
        except ValueError as error:
            what = "the item has no text to tombstone" if item else "the value has no words to match"
            raise UserError(what, Exit.USAGE) from error
        if not planned(plan, dry_run=dry_run, ask=ask, json_out=json_out):
            return
        try:
            done = plan.apply(uow)
        except forgetting.NotFound as error:
            raise UserError(str(error), Exit.NOT_FOUND) from error
        data = done.as_dict()
        if session:
            message = f"session {done.session_id} {'deleted' if done.deleted else 'was already deleted'}; {len(done.retired)} item(s) retired"
        elif item:
            message = f"item {done.item_id} retired; tombstone {done.tombstone_id} placed on its text; {len(done.also_retired)} other item(s) retired"
        else:
            message = forgot_line(done)
    folder = followed_folder(s)
    data["folder"] = str(folder) if folder else None
    message += updated(s)
    if json_out:
        emit_json(data)
    else:
        console.print(message, highlight=False)


def forgot_line(done: Any) -> str:
    """What forgetting a value did, in one line (ids and counts only)."""
    state = "was already in force" if done.already else "placed"
    notes = f", {len(done.scrubbed_notes)} note(s)" if done.scrubbed_notes else ""
    return (
        f"tombstone {done.tombstone_id} {state} (scope {done.scope}); {len(done.retired)} item(s) retired, "
        f"{len(done.scrubbed_sessions)} session(s){notes} scrubbed"
    )


def _erase(value: str, reason: str, *, yes: bool, dry_run: bool, json_out: bool) -> None:
    from mnemolog.cli.memory_folder import followed_folder, updated
    from mnemolog.domain.services.erase import ERASE_REASON, plan_erase

    if not value.strip():
        raise UserError("the value has no words to match", Exit.USAGE)
    with store() as s:
        given = reason if reason != "forgotten at the user's request" else ERASE_REASON
        try:
            plan = plan_erase(s, value, given)
        except ValueError as error:
            raise UserError("the value has no words to match", Exit.USAGE) from error
        kinds = ", ".join(f"{n} {kind}(s)" for kind, n in plan.counts().items()) or "nothing"
        if dry_run:
            if json_out:
                emit_json({**plan.as_dict(), "folder": None})
            else:
                console.print(
                    f"erase would {plan_line(plan)}, and re-record {kinds} under new keys and destroy the old ones "
                    f"(tombstone {plan.tombstone_id})",
                    highlight=False, markup=False,
                )
                console.print("\n".join(plan_lines(plan)), highlight=False, markup=False)
            _unsealed(plan.unsealed_events)
            return
        if not yes:  # asked even off a terminal: an erase cannot be undone
            confirm_plan(
                plan,
                f"Erase this value from the whole store, past events included ({kinds} re-keyed)? This cannot be undone.",
                "erase cancelled: nothing was written",
            )
        result = plan.apply(s, s.keys, s)
    folder = followed_folder(s)
    data = {**result.as_dict(), "folder": str(folder) if folder else None}
    if json_out:
        emit_json(data)
    else:
        console.print(
            f"erased: tombstone {result.tombstone_id} placed (scope global); {len(result.retired)} item(s) retired; "
            f"{kinds} re-recorded under new keys, {result.keys_destroyed} old key(s) destroyed; views rebuilt{updated(s)}",
            highlight=False,
        )
    _unsealed(result.unsealed_events)


def _unsealed(count: int) -> None:
    if count:
        console.print(
            f"[yellow]warning:[/yellow] {count} event(s) recorded before sealing hold the value in clear and cannot be erased",
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
            result = forgetting.plan_lift(s, tid, reason).apply(s)
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
    from mnemolog.domain.services import retention

    with store() as s:
        window = timedelta(days=s.settings.retention_days if days is None else days)
        plan = retention.plan_prune(s, retention=window, limit=s.settings.max_selected)
        if dry_run:
            show_dry_run(plan, json_out, "prune")
            return
        result = plan.apply(s)
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

    with store() as s:
        plan = retention.plan_reset(s)
        if not yes:
            confirm_plan(plan, "Withdraw all memory (every extraction and every item)?", "reset cancelled", shown=20)
        result = plan.apply(s)
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
