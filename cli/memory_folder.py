"""Writing the memory folder from a command: `render` and `run` into any target; what a command says of the folder after it.

The configured folder follows the log by itself: the store session brings it in
step when a command that wrote ends (``adapters.store_session``, guarantee 7).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mnemolog.cli.output import UserError

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store


def write_memory_folder(store: Store, out: Path, project: str | None = None) -> list[str]:
    """Render the folder for ``project`` (None: every project) and swap it into ``out``; its files' paths."""
    from mnemolog.adapters.folder_writer import FolderWriteError
    from mnemolog.adapters.followers import render_folder

    try:
        return render_folder(store, out, project)
    except FolderWriteError as error:
        raise UserError(str(error)) from error


def followed_folder(store: Store) -> Path | None:
    """The memory folder the store session re-rendered when the command's block ended, if it did."""
    return store.followed.folder if store.followed else None


def updated(store: Store) -> str:
    """The tail a command's message gets when its store session re-rendered the folder."""
    folder = followed_folder(store)
    return f"; memory folder {folder} updated" if folder else ""
