"""Age retires memory nobody vouched for; an item a person accepted stays when its sessions leave the window (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mnemolog.adapters.heuristic_consolidator import HeuristicConsolidator
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services.review import review
from support.consolidating import run_consolidation
from support.forgetting import start
from support.stores import FixedClock, StoreFactory


def test_an_accepted_item_outlives_the_window_and_the_others_retire_by_age(store_factory: StoreFactory, tmp_path) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock)
    scenario = start(store, tmp_path)
    active = {i.item_id: i for i in store.reads().active_items()}
    assert len(active) >= 2
    accepted = scenario.value_items()[0]
    review(store, accepted, Trust.ACCEPTED, "dev", "right")

    # The sessions, and their import (recorded at the real time of the save), are long out of the window.
    clock.now = datetime.now(UTC) + timedelta(days=store.settings.retention_days + 1)
    report = run_consolidation(store, HeuristicConsolidator())
    assert report.status == "completed", report.detail

    still = {i.item_id for i in store.reads().active_items()}
    assert accepted in still, "an accepted item was retired by age"
    assert set(active) - {accepted} - still, "the items nobody vouched for retire by age"
    kept = [o for o in report.overrides if o.item_id == accepted]
    assert kept and "kept when its sessions leave the retention window" in kept[0].reason

    # The true reason, in the report and in explain: not "all evidence sessions were removed" (they were not).
    aged = set(active) - {accepted} - still
    assert {reason for item, reason in report.retirements if item in aged} == {"its sessions left the 30-day retention window"}
    story = store.history().explain(next(iter(aged)), store.matcher())
    assert story is not None
    assert [c.reason for c in story.history if c.action == "retired"] == ["its sessions left the 30-day retention window"]
