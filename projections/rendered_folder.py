"""The memory folder as it stands now: the views read for a reader's scope, tombstones enforced, rendered.

The one read behind ``render``, ``run``, the MCP ``read_memory_file`` tool and
anything else that shows the folder. ``project`` is the reader: None for the
shared folder (read by every project, so every tombstone applies), a scope key
for one project's folder (its items and the global ones, with the tombstones
that reach it).
"""

from __future__ import annotations

from collections.abc import Callable

from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.folder_model import without_forgotten
from mnemolog.projections.markdown_folder import render_folder
from mnemolog.projections.reads import ViewReads


def render_files(
    reads: ViewReads, matcher: TombstoneMatcher, project: str | None, count_tokens: Callable[[str], int]
) -> dict[str, str]:
    """The folder's files (relative path -> text) for ``project`` (None: the shared folder)."""
    return render_folder(without_forgotten(reads.folder_model(project), matcher), count_tokens)
