"""Memory at a past moment: transaction time by replaying the log, valid time from the views.

Transaction time (``as_of``): replay the events recorded up to that moment
into a throwaway view and render the folder as it stood (by nature a read of
the log up to that moment). Valid time (``valid_at``): the items memory holds
now to be true at that moment (valid_from <= T < valid_to), invalidated ones
included, read from the views. Tombstones in force now still apply: a forgotten value never comes
back through history.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from eventsourcing.persistence import Tracking
from mnemolog.domain.application import MnemologApp
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.folder_model import FolderModel, without_forgotten
from mnemolog.projections.log_reader import log_events
from mnemolog.projections.markdown_folder import render_folder
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads, item_row
from mnemolog.projections.view_store import MemoryView, open_sqlite_view

BATCH = 500


@contextmanager
def replayed_view(app: MnemologApp, until: datetime | None) -> Iterator[MemoryView]:
    """A fresh SQLite view holding the log's events recorded up to ``until`` (all when None)."""
    with tempfile.TemporaryDirectory(prefix="mnemolog-asof-") as folder:
        view = open_sqlite_view(str(Path(folder) / "view.sqlite"))
        batch: list[tuple[object, Tracking]] = []
        for position, event in log_events(app, until):
            batch.append((event, Tracking(app.name, position)))
            if len(batch) >= BATCH:
                view.apply(batch)
                batch = []
        view.apply(batch)
        try:
            yield view
        finally:
            view.datastore.close()


def folder_as_of(
    app: MnemologApp,
    at: datetime,
    matcher: TombstoneMatcher,
    count_tokens: Callable[[str], int],
    project: str | None = None,
) -> dict[str, str]:
    """The memory folder's files as they stood at ``at`` (transaction time)."""
    with replayed_view(app, at) as view:
        model = ViewReads(view).folder_model(project)
    files: dict[str, str] = render_folder(without_forgotten(model, matcher), count_tokens)
    return files


def items_valid_at(reads: ViewReads, at: datetime, matcher: TombstoneMatcher, project: str | None = None) -> list[ItemRow]:
    """Items memory holds (now) to have been true at ``at``: valid_from (or creation) <= T < valid_to.

    What memory holds now is what the views hold (a replay of the whole log
    builds the same tables), so this reads them rather than replaying the log.
    """
    cond, params = ("1 = 1", []) if project is None else ("scope IN (?, 'global')", [project])
    rows = reads.query(f"SELECT * FROM {table('items')} WHERE status IN ('active', 'invalidated') AND {cond} ORDER BY id", params)
    out = []
    for row in map(item_row, rows):
        start = row.valid_from or row.created_at
        end = row.valid_to
        if start is None or start > at or (end is not None and end <= at):
            continue
        item = replace(row, valid_from=start, updated_at=row.updated_at or start)
        if not matcher.withholds(item, project):
            out.append(item)
    return out


def folder_valid_at(
    reads: ViewReads, at: datetime, matcher: TombstoneMatcher, count_tokens: Callable[[str], int], project: str | None = None
) -> dict[str, str]:
    """A folder of the items that were true at ``at`` (no session files: valid time concerns items)."""
    model = FolderModel(items=tuple(items_valid_at(reads, at, matcher, project)), sessions=(), project=project)
    files: dict[str, str] = render_folder(model, count_tokens)
    return files
