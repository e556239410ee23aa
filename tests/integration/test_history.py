"""history --as-of renders the folder as it stood; --valid-at lists what memory held true then."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.plan import ConsolidationPlan, Edit
from support.consolidating import rendered, run_consolidation
from support.forgetting import API, start
from support.scripted_models import ScriptedConsolidator, handle_for
from support.stores import FixedClock


def _moment() -> datetime:
    time.sleep(0.01)
    moment = datetime.now(UTC)
    time.sleep(0.01)
    return moment


def test_as_of_before_and_after_a_consolidation(store_factory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock())
    sc = start(store, tmp_path)
    before = _moment()
    folder_before = rendered(store)
    ended = datetime.now(UTC) + timedelta(days=1)  # items without valid_from are valid from when they were added
    result = run_consolidation(store, ScriptedConsolidator(lambda req: ConsolidationPlan(edits=(
        Edit(op="invalidate", target=handle_for(req, lambda i: "CSV" in i.title), valid_from=ended, reason="superseded"),
        Edit(op="add", kind="knowledge", scope=API, task_group="api", title="Lint", text="Run ruff before pushing.",
             evidence=(str(sc.source),), reason="new"),
    ))), all_sessions=True)
    assert result.status == "completed", result.detail
    after = _moment()
    folder_after = rendered(store)
    assert folder_before != folder_after

    matcher = store.matcher()
    history = store.history()
    assert history.folder_as_of(before, matcher, count_tokens) == folder_before
    assert history.folder_as_of(after, matcher, count_tokens) == folder_after
    assert "ruff" not in history.folder_as_of(before, matcher, count_tokens)["MEMORY.md"]

    # valid time: the invalidated item was true before it ended, not after
    csv_then = [i for i in history.items_valid_at(ended - timedelta(days=1), matcher) if "CSV" in i.title]
    csv_later = [i for i in history.items_valid_at(ended + timedelta(days=1), matcher) if "CSV" in i.title]
    assert csv_then and not csv_later
