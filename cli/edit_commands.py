"""Steering memory by hand: edit an item's text, pin it, change its scope. Each is an event; the folder follows.

Every command reads the item as the project of ``--cwd`` (default: the
current folder; or ``--project`` / ``scope --from``, a scope key) sees it: an item of another project is not found, as with
``show``. Ids may be given whole, as ``[item:<id>]``, or as a unique prefix.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path
from typing import Any

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, UserError, console, emit_json

JSON = typer.Option(False, "--json", help="Print JSON.")
ITEM = typer.Argument(..., help="An item id or a unique prefix of one (as list and search print it), or [item:<id>].")
CWD = typer.Option(None, "--cwd", help="The working folder whose project the item belongs to (default: the current folder).")
BY = typer.Option(None, "--by", help="Who makes the change (default: the login name).")
REASON = typer.Option("", "--reason", help="Why, for the item's history (explain shows it).")


def _finish(s: Any, data: dict[str, Any], message: str, json_out: bool) -> None:
    """Print what the command did, after its store session brought the folder in step."""
    from mnemolog.cli.memory_folder import followed_folder, updated

    folder = followed_folder(s)
    if json_out:
        emit_json({**data, "folder": str(folder) if folder else None})
    else:
        console.print(message + updated(s), highlight=False, markup=False)


def _refused(error: Exception) -> UserError:
    from mnemolog.domain.services.edit import ItemNotFound

    return UserError(str(error), Exit.NOT_FOUND if isinstance(error, ItemNotFound) else Exit.ERROR)


def edit(
    item: str = ITEM,
    text: list[str] | None = typer.Argument(
        None, help="The new text ('-' reads it from stdin). None: edit the item in $VISUAL or $EDITOR (its title on the first line, a blank line, the text)."
    ),
    title: str | None = typer.Option(None, "--title", help="A new title too (default: keep it)."),
    by: str | None = BY,
    reason: str = REASON,
    cwd: Path | None = CWD,
    project_key: str | None = options.PROJECT,
    json_out: bool = JSON,
) -> None:
    """Rewrite a memory item's text (an Edited event; secrets are redacted, forgotten values refused).

    With no text, the item opens in $VISUAL (else $EDITOR) as git opens a commit message: the title on the
    first line, a blank line, then the text (an untitled item's buffer starts with the blank line; a buffer
    without that blank second line is all text, the title kept). Saving a change records one edit; an
    unchanged or empty buffer records nothing; an editor that exits non-zero records nothing and fails.
    """
    from mnemolog.domain.services import edit as editing

    project = options.project_of(cwd, project_key)
    if text:
        words = " ".join(text)
        new_text = sys.stdin.read() if words.strip() == "-" else words
    else:
        item, new_text, title, nothing = _edited_in_editor(item, project, title)
        if nothing:
            if json_out:
                emit_json({"item": item, "changed": False, "title": title, "text": new_text, "redactions": 0, "folder": None})
            else:
                console.print(f"item {item}: {nothing}, nothing recorded", highlight=False, markup=False)
            return
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        try:
            done = editing.edit_item(
                s, item_id, new_text, title=title, editor=by or getpass.getuser(), reason=reason, project=project, redactor=s.ports.redactor
            )
        except (editing.ItemNotFound, editing.EditRefused) as error:
            raise _refused(error) from error
        state = "edited" if done.changed else "already had that text"
        redacted = f" ({done.redactions} secret(s) redacted)" if done.redactions else ""
    _finish(s, done.as_dict(), f"item {item_id} {state}{redacted}", json_out)


def _edited_in_editor(item: str, project: str, title: str | None) -> tuple[str, str, str, str]:
    """The item's (full id, new text, new title, why nothing is to be recorded or "") as edited in the user's editor.

    The store is not held open while the editor runs; an item that changed meanwhile is refused.
    """
    from mnemolog.adapters.editor_buffer import (
        EditorFailed,
        edit_in_editor,
        editor_command,
        item_buffer,
        read_buffer,
    )

    editor = editor_command()
    if editor is None:
        raise UserError("no editor: set $VISUAL or $EDITOR, or give the new text (mnemolog edit ID \"text\")", Exit.USAGE)
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        row = s.reads().item(item_id, project)
    if row is None or row.status != "active":
        raise UserError(f"item {item_id} is not current in {project} (or global): nothing to edit", Exit.NOT_FOUND)
    old_title = row.title if title is None else title.strip()
    try:
        saved = edit_in_editor(item_buffer(old_title, row.text), editor)
    except EditorFailed as error:
        raise UserError(f"{error}: nothing recorded") from error
    new_title, new_text = read_buffer(saved)
    chosen_title = old_title if new_title is None else new_title
    if not new_text:
        return str(item_id), row.text, row.title, "the buffer is empty"
    if new_text == row.text.strip() and chosen_title == row.title.strip():
        return str(item_id), row.text, row.title, "unchanged"
    with store() as s:
        now = s.reads().item(item_id, project)
    if now is None or now.revision != row.revision:
        raise UserError(f"item {item_id} changed while it was being edited: nothing recorded (edit it again)")
    return str(item_id), new_text, chosen_title, ""


def pin(
    item: str = ITEM,
    off: bool = typer.Option(False, "--off", help="Unpin: the item ranks and may be retired like any other again."),
    by: str | None = BY,
    reason: str = REASON,
    cwd: Path | None = CWD,
    project_key: str | None = options.PROJECT,
    json_out: bool = JSON,
) -> None:
    """Pin a memory item: it comes first in context and the folder, and no consolidation retires it (--off unpins)."""
    from mnemolog.domain.services import edit as editing

    project = options.project_of(cwd, project_key)
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        try:
            done = editing.pin_item(s, item_id, not off, editor=by or getpass.getuser(), reason=reason, project=project)
        except (editing.ItemNotFound, editing.EditRefused) as error:
            raise _refused(error) from error
        state = ("now " if done.changed else "already ") + ("pinned" if done.pinned else "not pinned")
    _finish(s, done.as_dict(), f"item {item_id} is {state}", json_out)


def scope(
    item: str = ITEM,
    user: bool = typer.Option(False, "--user", help="Make the item user-wide (global): every project reads it."),
    to_project: str | None = typer.Option(None, "--project", help="Move it to this project: a scope key (git:host/owner/repo, path:/dir) or a folder."),
    by: str | None = BY,
    reason: str = REASON,
    cwd: Path | None = CWD,
    from_project: str | None = typer.Option(None, "--from", help="The project the item is read in now, a scope key (default: that of --cwd)."),
    json_out: bool = JSON,
) -> None:
    """Change a memory item's scope: user-wide (--user) or one project (--project P); a ScopeChanged event."""
    from mnemolog.adapters.scope import resolve_scope
    from mnemolog.domain.services import edit as editing

    if user == (to_project is not None):
        raise UserError("give exactly one of --user or --project P", Exit.USAGE)
    if to_project is not None and not to_project.startswith(("git:", "path:")) and not Path(to_project).expanduser().is_dir():
        raise UserError(f"not a project: {to_project[:80]!r} (give a scope key, git:host/owner/repo or path:/dir, or a folder)", Exit.USAGE)
    target = "global" if user else resolve_scope(to_project)
    project = options.project_of(cwd, from_project)
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        try:
            done = editing.change_scope(s, item_id, target, editor=by or getpass.getuser(), reason=reason, project=project)
        except (editing.ItemNotFound, editing.EditRefused) as error:
            raise _refused(error) from error
        message = (
            f"item {item_id} moved from {done.previous} to {done.scope}" if done.changed else f"item {item_id} is already in {done.scope}"
        )
    _finish(s, done.as_dict(), message, json_out)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(edit)
    app.command()(pin)
    app.command()(scope)
