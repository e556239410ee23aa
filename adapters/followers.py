"""The followers: what is kept in step with the log outside the store — the memory folder agents read and the agents' skill folders.

"Follow" means one thing in mnemolog: bring a follower in step with the log.
The views follow it inside the store (``Store.catch_up``); the memory folder
and the skill folders follow it here, after a write, when the store session
ends (``adapters.store_session``; guarantee 7). Nothing else calls ``follow``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store


@dataclass(frozen=True)
class Followed:
    """What a follow brought in step: the memory folder re-rendered (if it is rendered here), and what could not be."""

    folder: Path | None
    problems: tuple[str, ...] = ()  # followers left behind (the memory itself is fine): one line each


def render_folder(store: Store, out: Path, project: str | None = None) -> list[str]:
    """Render the folder for ``project`` (None: every project) and swap it into ``out``; its files' paths.

    The files are written as they are rendered (``MEMORY.md`` group by group), never held whole.
    Raises ``FolderWriteError`` when ``out`` cannot be written.
    """
    from mnemolog.adapters.folder_writer import write_folder
    from mnemolog.projections.rendered_folder import folder_pieces

    # memory_summary.md is fitted from the item lines' counts the views stored; its other lines' counts
    # are remembered in the home folder, so a re-render loads no tokenizer (~70 MiB resident once loaded)
    position = store.app.last_written
    files = folder_pieces(store.reads(), store.matcher(), store.ports.tokenizer.count, project)
    write_folder(files, out)
    if project is None and _same(out, Path(store.settings.folder)):
        store.folder_at = max(store.folder_at, position)  # the configured folder shows this position
    return list(files)


def follow(store: Store) -> Followed:
    """Bring the followers in step with the log: the agents' skill folders, and the configured memory folder once rendered.

    A folder never rendered here is left alone (nothing on disk can be stale); one
    already rendered at the current position (``run`` renders it) is not rendered again.
    """
    problems = []
    from mnemolog.adapters.agent_skills import follow_store

    try:
        follow_store(store)
    except OSError as error:  # the agent's folder is not writable: memory itself is fine; say so, go on
        problems.append(f"Claude Code's skills were not updated: {error}")
    folder = Path(store.settings.folder)
    if not (folder / "memory_summary.md").is_file():
        return Followed(None, tuple(problems))
    if store.folder_at < store.app.last_written:
        render_folder(store, folder)
    return Followed(folder, tuple(problems))


def _same(a: Path, b: Path) -> bool:
    return a.expanduser().absolute() == b.expanduser().absolute()
