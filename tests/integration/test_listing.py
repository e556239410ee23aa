"""Listing reads and id prefixes on both backends: items with filters, tombstones, runs, sessions; git-style ids."""

from __future__ import annotations

from uuid import UUID

import pytest
from mnemolog.domain.consolidation import Consolidation, InputDiff
from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id
from mnemolog.domain.memory_item import MemoryItem, Trust
from mnemolog.domain.services.edit import change_scope, edit_item, pin_item
from mnemolog.domain.services.forget import forget_value
from support.memory import item, save

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"


def with_id(text: str, scope: str, n: int) -> MemoryItem:
    """An item whose id starts with a chosen prefix (``abcd000n`` ...), so prefixes can be tested."""
    made: MemoryItem = MemoryItem._create(  # the aggregate's own constructor, given the id
        MemoryItem.Added, id=UUID(f"abcd{n:04x}-0000-4000-8000-{n:012x}"), kind="knowledge", scope=scope, task_group="",
        title="", text=text, keywords=(), evidence=(), valid_from=None, consolidation_id=None, reason="test",
    )
    return made


def test_items_are_listed_with_filters_pinned_first(store_factory) -> None:
    store = store_factory()
    lint, slow, web, pref = save(
        store,
        item(API, "Run make lint before pushing.", trust=Trust.ACCEPTED),
        item(API, "The staging host is SLOW on Mondays."),
        item(WEB, "Web builds with vite."),
        item("global", "Prefers small commits.", kind="preference"),
    )
    pin_item(store, UUID(slow))
    reads = store.reads()

    assert [str(i.item_id) for i in reads.list_items(API)][:1] == [slow]  # pinned first
    assert {str(i.item_id) for i in reads.list_items(API)} == {lint, slow, pref}
    assert {str(i.item_id) for i in reads.list_items()} == {lint, slow, web, pref}
    assert [str(i.item_id) for i in reads.list_items(API, trust="accepted")] == [lint]
    assert [str(i.item_id) for i in reads.list_items(API, kind="preference")] == [pref]
    assert [str(i.item_id) for i in reads.list_items(API, text="slow on")] == [slow]  # any case
    assert reads.list_items(API, text="100%_") == []  # LIKE wildcards are plain characters
    forget_value(store, "make lint", API)
    reads = store.reads()
    assert [str(i.item_id) for i in reads.list_items(API, status="retired")] == [lint]
    assert {str(i.item_id) for i in reads.list_items(API, status="active")} == {slow, pref}


def test_edits_and_scope_changes_reach_the_view_on_both_backends(store_factory) -> None:
    store = store_factory()
    (raw,) = save(store, item(API, "Deploy with deploy.sh."))
    edit_item(store, UUID(raw), "Deploy with `make deploy`.")
    change_scope(store, UUID(raw), WEB)
    reads = store.reads()
    row = reads.item(UUID(raw), WEB)
    assert row is not None and (row.text, row.scope, row.revision) == ("Deploy with `make deploy`.", WEB, 3)
    assert reads.item(UUID(raw), API) is None
    assert [h.item.item_id for h in reads.search("deploy", WEB, None, 5)] == [UUID(raw)]
    assert reads.search("deploy", API, None, 5) == []
    assert store.rebuild() > 0 and store.reads().item(UUID(raw), WEB) == row  # a rebuild gives the same row


def test_ids_resolve_from_prefixes_and_ambiguous_ones_name_the_candidates(store_factory) -> None:
    store = store_factory()
    one, two, web = (
        with_id("Run make test.", API, 1),
        with_id("Run make lint.", API, 2),
        with_id("Web builds with vite.", WEB, 0x10),
    )
    save(store, one, two, web)
    reads = store.reads()

    assert resolve_id(reads, "items", str(one.id)[:9]) == one.id  # "abcd0001-"
    assert resolve_id(reads, "items", f"[item:{str(two.id)[:8]}]") == two.id
    assert resolve_id(reads, "items", str(one.id).upper()) == one.id
    with pytest.raises(AmbiguousId) as ambiguous:
        resolve_id(reads, "items", "abcd000")
    assert set(ambiguous.value.candidates) == {one.id, two.id}
    assert "abcd0001" in str(ambiguous.value) and "abcd0002" in str(ambiguous.value)
    with pytest.raises(UnknownId):
        resolve_id(reads, "items", "abc")  # too short
    with pytest.raises(UnknownId):
        resolve_id(reads, "items", "abcd0010", project=API)  # another project's item is not found
    assert resolve_id(reads, "items", "abcd0010", project=WEB) == web.id
    with pytest.raises(UnknownId):
        resolve_id(reads, "items", "abcd%")


def test_tombstones_and_runs_are_listed_without_values(store_factory) -> None:
    store = store_factory()
    placed = forget_value(store, "blue-falcon-42", "global", "a leaked token")
    run = Consolidation(selection=(), previous_selection=(), diff=InputDiff(), worker="t", model="scripted")
    run.complete(added=2, revised=1, retired=0, invalidated=0, overrides=(), model="scripted", prompt_hash="p", user_profile="")
    store.app.save_all(run)
    reads = store.reads()

    (tomb,) = reads.tombstones()
    assert (tomb.tombstone_id, tomb.scope, tomb.reason, tomb.lifted) == (placed.tombstone_id, "global", "a leaked token", False)
    assert "blue-falcon" not in repr(tomb)
    (listed,) = reads.runs()
    assert (listed.run_id, listed.status, listed.added, listed.revised) == (run.id, "completed", 2, 1)
    assert resolve_id(reads, "tombstones", str(placed.tombstone_id)[:6]) == placed.tombstone_id
    assert resolve_id(reads, "runs", str(run.id)[:6]) == run.id
