"""The history port (``domain.history.HistoryReads``) over the log and the views.

What each read reads:

- ``explain``: the item's own events, then by id the sessions, runs,
  tombstones and notes they name, and the item's citations through the views'
  ``item_citations`` links; never the whole log.
- ``audit``: the run's own events and its views row, the items the views'
  ``run_edits`` links say it edited (each item's own events), and the input
  sessions' views rows.
- ``runs`` and ``latest_run``: the views' ``consolidations`` table.
- ``items_valid_at`` / ``folder_valid_at``: the views' items (what memory holds now).
- ``folder_as_of``: the log up to that moment, replayed into a throwaway view
  (the state at a past time has no table of its own).
- ``find_items``: the whole log (past texts live only there).
- ``source_lines``: the one session's aggregate.

The modules doing the work (explain, audit, as_of, source_lines) load on
first use: opening the port costs nothing.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.history import (
    CountTokens,
    ItemMatch,
    ItemStory,
    RunAudit,
    RunSummary,
    SourceLine,
)
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.view_reads import ViewReads


class LogHistory:
    """``HistoryReads`` over one store's log (``app``) and views (``reads``, caught up by its opener)."""

    def __init__(self, app: MnemologApp, reads: ViewReads) -> None:
        self.app = app
        self.reads = reads

    def explain(self, item_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> ItemStory | None:
        """The item's story (see ``projections.explain.explain_item``)."""
        from mnemolog.projections.explain import explain_item

        return explain_item(self.app, self.reads, item_id, matcher, project)

    def find_items(self, text: str, limit: int = 10, project: str | None = None) -> list[ItemMatch]:
        """Items whose current or past text shares the most words with ``text``, best first."""
        from mnemolog.projections.explain import find_items

        return find_items(self.app, text, limit, project)

    def runs(self, since: datetime | None = None) -> list[RunSummary]:
        """Every run (started at or after ``since``), oldest first."""
        from mnemolog.projections.audit import list_runs

        return list_runs(self.reads, since)

    def latest_run(self) -> UUID | None:
        """The most recently started run."""
        from mnemolog.projections.audit import latest_run

        return latest_run(self.reads)

    def audit(self, run_id: UUID, matcher: TombstoneMatcher, project: str | None = None) -> RunAudit | None:
        """One run's audit (see ``projections.audit.audit_run``)."""
        from mnemolog.projections.audit import audit_run

        return audit_run(self.app, self.reads, run_id, matcher, project)

    def folder_as_of(self, at: datetime, matcher: TombstoneMatcher, count_tokens: CountTokens, project: str | None = None) -> dict[str, str]:
        """The memory folder as it stood at ``at`` (transaction time)."""
        from mnemolog.projections.as_of import folder_as_of

        return folder_as_of(self.app, at, matcher, count_tokens, project)

    def items_valid_at(self, at: datetime, matcher: TombstoneMatcher, project: str | None = None) -> list[ItemRow]:
        """The items memory holds now to have been true at ``at`` (valid time)."""
        from mnemolog.projections.as_of import items_valid_at

        return items_valid_at(self.reads, at, matcher, project)

    def folder_valid_at(self, at: datetime, matcher: TombstoneMatcher, count_tokens: CountTokens, project: str | None = None) -> dict[str, str]:
        """A folder of the items that were true at ``at``."""
        from mnemolog.projections.as_of import folder_valid_at

        return folder_valid_at(self.reads, at, matcher, count_tokens, project)

    def source_lines(self, session_id: UUID, item_text: str, matcher: TombstoneMatcher, limit: int = 3) -> list[SourceLine]:
        """The session's entries that share the most words with ``item_text``, in session order."""
        from mnemolog.projections.source_lines import source_lines

        return source_lines(self.app, session_id, item_text, matcher, limit)
