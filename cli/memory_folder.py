"""Writing the memory folder: `render` and `run` into any target, and the shared folder following the log.

Guarantee 7: a command that changes what the folder shows (forget, lift,
review, prune, reset, consolidate) leaves the configured folder showing it
when it returns, once that folder has been rendered.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mnemolog.cli.output import UserError

if TYPE_CHECKING:
    from mnemolog.adapters.bootstrap import Store


def write_memory_folder(store: Store, out: Path, project: str | None = None) -> list[str]:
    """Render the folder for ``project`` (None: every project) and swap it into ``out``; its files' paths.

    The files are written as they are rendered (``MEMORY.md`` group by group), never held whole.
    """
    from mnemolog.adapters.folder_writer import FolderWriteError, write_folder
    from mnemolog.cli.read_path import tokenizer
    from mnemolog.projections.rendered_folder import folder_pieces

    # memory_summary.md is fitted from the item lines' counts the views stored; its other lines' counts
    # are remembered in the home folder, so a re-render loads no tokenizer (~70 MiB resident once loaded)
    files = folder_pieces(store.reads(), store.matcher(), tokenizer(store).count, project)
    try:
        write_folder(files, out)
    except FolderWriteError as error:
        raise UserError(str(error)) from error
    return list(files)


def follow_skills(store: Store) -> None:
    """Keep the skills ``install claude-code`` exposed (Claude Code's user skill folder) in step with memory."""
    from mnemolog.adapters.agent_skills import follow_store

    try:
        follow_store(store)
    except OSError as error:  # the agent's folder is not writable: memory itself is fine; say so, go on
        from mnemolog.cli.output import errors

        errors.print(f"warning: Claude Code's skills were not updated: {error}", highlight=False, markup=False)


def follow_log(store: Store) -> Path | None:
    """Re-render the configured memory folder if it exists (agents read it), and the installed skills; the folder, or None."""
    follow_skills(store)
    folder = Path(store.settings.folder)
    if not (folder / "memory_summary.md").is_file():
        return None  # never rendered here: nothing on disk can be stale
    write_memory_folder(store, folder)
    return folder


def updated(folder: Path | None) -> str:
    """The tail a command's message gets when it re-rendered the folder."""
    return f"; memory folder {folder} updated" if folder else ""
