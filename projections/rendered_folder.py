"""The memory folder as one reader sees it: the views read for a reader's scope, tombstones enforced, rendered.

The one read behind ``render``, ``run``, the MCP ``read_memory_file`` tool and
anything else that shows the folder.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.folder_model import without_forgotten
from mnemolog.projections.markdown_folder import folder_parts, render_folder, render_skills
from mnemolog.projections.view_reads import ViewReads


def folder_files(
    reads: ViewReads, matcher: TombstoneMatcher, count_tokens: Callable[[str], int], project: str | None = None
) -> dict[str, str]:
    """The folder's files (relative path -> text) for a reader in ``project``.

    ``project`` None is the shared folder of every project, which every
    project reads (so every tombstone applies to it).
    """
    return render_folder(without_forgotten(reads.streamed_folder_model(project), matcher), count_tokens)


def folder_pieces(
    reads: ViewReads, matcher: TombstoneMatcher, count_tokens: Callable[[str], int], project: str | None = None
) -> dict[str, Iterable[str]]:
    """The folder's files as ``folder_files`` renders them, each as pieces to write in turn (``MEMORY.md`` group by group).

    The items are read from the views as the pieces are: write them while ``reads`` is open.
    """
    return folder_parts(without_forgotten(reads.streamed_folder_model(project), matcher), count_tokens)


def folder_skills(
    reads: ViewReads, matcher: TombstoneMatcher, project: str | None = None, scopes: Collection[str] | None = None
) -> dict[str, str]:
    """The skills of ``project``'s folder (name -> SKILL.md), as ``folder_files`` renders them, without the rest.

    ``scopes`` keeps only the skills of those scopes (a project's own: ``{project}``).
    """
    # a skill's file, name and folder depend on the skills and the sessions alone: the other items are not read
    return render_skills(without_forgotten(reads.streamed_folder_model(project, kind="skill"), matcher), scopes)
