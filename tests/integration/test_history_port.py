"""The history port (``Store.history()``) on SQLite and PostgreSQL: typed results, and reads that never scan the log.

An item's story reads the item's events and the aggregates they name; a run's
audit reads the run and the items the views say it edited; the runs and the
valid-time view come from the views. A count of the log's notification
selects shows it: none of these reads selects a single page of notifications.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemolog.adapters.store import Store
from mnemolog.domain.history import Cited, ItemChange, ItemStory, RunAudit, Tombstoned
from support.history_world import S1, S2, story_world
from support.sessions import thread_id
from support.stores import FixedClock


@contextmanager
def notification_selects(store: Store) -> Iterator[list[Any]]:
    """Every page of notifications read from the log while the block runs (what a scan of the log reads)."""
    recorder = store.app.recorder
    original = recorder.select_notifications
    calls: list[Any] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    recorder.select_notifications = counting  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        recorder.select_notifications = original  # type: ignore[method-assign]


def test_an_items_story_is_typed_and_reads_no_page_of_the_log(store_factory, tmp_path: Path) -> None:
    store, (testing, deploy), first, second = story_world(store_factory(clock=FixedClock()), tmp_path)
    history = store.history()
    matcher = store.matcher()

    with notification_selects(store) as selects:
        story = history.explain(testing, matcher)
        forgotten = history.explain(deploy, matcher)

    assert selects == [], "explain of one item scanned the log"
    assert isinstance(story, ItemStory) and isinstance(forgotten, ItemStory)
    assert [(c.action, c.consolidation) for c in story.history] == [
        ("added", str(first.consolidation_id)), ("revised", str(second.consolidation_id)),
    ]
    assert story.history[1].before is not None and story.history[1].before.text == "Run make test before pushing."
    assert story.now.text == "Run make test-all before pushing." and story.now.status == "active"
    assert {s.session for s in story.sessions} == {str(S1), str(S2)}  # the evidence sessions, each read by its id
    assert story.sessions[0].extractions[0].model == "scripted-extractor"
    assert [r.consolidation for r in story.consolidations] == [str(first.consolidation_id), str(second.consolidation_id)]
    assert [(n.intent, n.text) for n in story.notes] == [("correct", "Prefer make test-all.")]  # the note the second run applied
    assert story.citations.count == 1 and story.citations.entries[0].source == "mcp"  # from the views' links
    assert [type(t) for t in story.timeline] == [ItemChange, ItemChange, Cited]

    assert forgotten.now.status == "retired" and "falcon" not in repr(forgotten)
    assert [t.tombstone for t in forgotten.timeline if isinstance(t, Tombstoned)] == [t.tombstone for t in forgotten.tombstones] != []
    assert forgotten.tombstones[0].events[0].event == "placed"
    # --json prints the same story
    data = story.as_dict()
    assert data["citations"]["list"] == [{"at": "2026-11-02T09:00:00+00:00", "source": "mcp", "citing_session": "019a-later"}]
    assert [t["action"] for t in data["timeline"]] == ["added", "revised", "cited"]


def test_a_runs_audit_and_the_runs_read_no_page_of_the_log(store_factory, tmp_path: Path) -> None:
    store, (testing, deploy), first, second = story_world(store_factory(clock=FixedClock()), tmp_path)
    history = store.history()
    matcher = store.matcher()

    with notification_selects(store) as selects:
        runs = history.runs()
        latest = history.latest_run()
        audited = history.audit(first.consolidation_id, matcher)
        scoped = history.audit(first.consolidation_id, matcher, project="git:github.com/acme/other")
        valid = history.items_valid_at(datetime.now(UTC), matcher)

    assert selects == [], "the runs, an audit or the valid-time view scanned the log"
    assert [r.consolidation for r in runs] == [str(first.consolidation_id), str(second.consolidation_id)]
    assert latest == second.consolidation_id
    assert runs[0].counts is not None and runs[0].counts.added == 2 and runs[0].status == "completed"
    assert isinstance(audited, RunAudit)
    assert sorted((e.op, e.item) for e in audited.edits) == sorted([("add", str(testing)), ("add", str(deploy))])
    assert all(e.after is not None and "falcon" not in e.after.text for e in audited.edits)  # the forgotten value stays cut out
    assert scoped is not None and scoped.edits == () and scoped.hidden.edits == 2  # another project sees none of api's edits
    assert audited.inputs.added and all(audited.agent_ids[s] in (thread_id(1), thread_id(2)) for s in audited.inputs.added)
    assert [i.item_id for i in valid] == [testing]  # the forgotten item was retired


def test_the_story_is_the_same_after_a_rebuild_of_the_views(store_factory, tmp_path: Path) -> None:
    """The links explain and audit read (an item's citations, a run's edits) are rebuilt from the log like every view table."""
    store, (testing, _), first, _ = story_world(store_factory(clock=FixedClock()), tmp_path)
    matcher = store.matcher()
    story, audited = store.history().explain(testing, matcher), store.history().audit(first.consolidation_id, matcher)

    store.rebuild()

    assert store.history().explain(testing, matcher) == story
    assert store.history().audit(first.consolidation_id, matcher) == audited
    assert story is not None and story.citations.count == 1
