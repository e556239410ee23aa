"""What a command reads: the project (``--cwd`` / ``--project``) and the opened store (one place, so every command fails the same way).

Cheap to import (the store's modules load when a store is opened; no typer),
so command modules may import it at top level, and the SessionStart hook runs
without typer (``cli/context_command.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mnemolog.cli.output import Exit, UserError

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store


def project_of(cwd: Path | None, project: str | None = None) -> str:
    """The project a command reads: ``--project`` (a scope key), else the scope of ``--cwd`` or the current folder."""
    from mnemolog.adapters.scope import scope_for_cwd

    def escape(text: str) -> str:  # rich only on the error path (the SessionStart hook never pays for it)
        from rich.markup import escape as rich_escape

        return rich_escape(text)

    if project is not None:
        if cwd is not None:
            raise UserError("--cwd and --project exclude each other", Exit.USAGE)
        if not project.startswith(("git:", "path:")):
            raise UserError(f"not a project scope key: {escape(project)} (expected git:host/owner/repo or path:/dir)", Exit.USAGE)
        return project
    if cwd is not None and not cwd.expanduser().is_dir():
        raise UserError(f"not a folder: {escape(str(cwd))}", Exit.USAGE)
    return scope_for_cwd(cwd)


@contextmanager
def store(catch_up: bool = True) -> Iterator[Store]:
    """The configured store for one command (``adapters.store_session``): caught up with the log (unless
    ``catch_up`` is False), its followers in step when the command wrote, closed afterwards. Failures are one line."""
    from mnemolog.adapters.store import StoreError
    from mnemolog.adapters.store_files import NOTICES
    from mnemolog.adapters.store_session import begin, end
    from mnemolog.cli.output import environment_failure, errors

    try:
        opened = begin(catch_up=catch_up)
    except StoreError as error:
        raise UserError(environment_failure(error) or str(error)) from error
    except Exception as error:  # settings that do not validate
        raise UserError(f"invalid configuration: {error}") from error
    for notice in NOTICES:
        errors.print(f"warning: {notice}", highlight=False, markup=False)
    NOTICES.clear()
    clean = False
    try:
        yield opened
        clean = True
    finally:
        try:
            end(opened, clean)
        except Exception as error:
            from mnemolog.adapters.folder_writer import (
                FolderWriteError,  # not on the read path: only when following failed
            )

            if isinstance(error, FolderWriteError):  # the memory folder could not be written: memory itself is fine
                raise UserError(str(error)) from error
            raise
    for problem in opened.followed.problems if opened.followed else ():
        errors.print(f"warning: {problem}", highlight=False, markup=False)
