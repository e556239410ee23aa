"""Editing, pinning and re-scoping items on a store in memory: each an event, seen by reads, context and explain."""

from __future__ import annotations

from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import MemoryItem, Trust
from mnemolog.domain.services.edit import (
    EditRefused,
    ItemNotFound,
    change_scope,
    edit_item,
    pin_item,
)
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.read import context
from support.memory import item, save

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"


class Words:
    """Counts words as tokens (the context's budget needs a tokenizer)."""

    def count(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, tokens: int) -> str:
        return " ".join(text.split()[:tokens])


def events(store: Store, item_id: UUID) -> list[object]:
    return list(store.app.events.get(item_id))


def test_an_edit_is_an_event_the_views_search_and_explain_show(memory_store: Store) -> None:
    store = memory_store
    (raw,) = save(store, item(API, "Run make lint before pushing.", title="lint"))
    item_id = UUID(raw)
    before = store.reads().item(item_id, API)
    assert before is not None and not before.edited_by_user

    done = edit_item(store, item_id, "Run `make lint-fast` before pushing.", editor="dana", reason="the target was renamed")

    assert done.as_dict() == {"item": raw, "changed": True, "title": "lint", "text": "Run `make lint-fast` before pushing.", "redactions": 0}
    last = events(store, item_id)[-1]
    assert isinstance(last, MemoryItem.Edited) and last.editor == "dana" and last.reason == "the target was renamed"
    reads = store.reads()
    row = reads.item(item_id, API)
    assert row is not None and row.text == "Run `make lint-fast` before pushing." and row.revision == 2
    assert row.edited_by_user  # later runs keep these words (the consolidator sees it)
    assert [h.item.item_id for h in reads.search("lint-fast", API, None, 5)] == [item_id]
    found = store.history().explain(item_id, store.matcher())
    assert found is not None
    story = found.as_dict()
    assert story is not None
    edited = [h for h in story["history"] if h["action"] == "edited"]
    assert edited[0]["before"]["text"] == "Run make lint before pushing."
    assert edited[0]["after"]["text"] == "Run `make lint-fast` before pushing." and edited[0]["editor"] == "dana"
    assert not edit_item(store, item_id, "Run `make lint-fast` before pushing.").changed  # no second event
    assert len(events(store, item_id)) == 2


def test_an_edit_is_redacted_and_refused_when_it_carries_a_forgotten_value(memory_store: Store) -> None:
    store = memory_store
    (raw,) = save(store, item(API, "Deploy with deploy.sh."))
    item_id = UUID(raw)
    forget_value(store, "blue-falcon-42", "global")

    with pytest.raises(EditRefused, match="forgotten value"):
        edit_item(store, item_id, "Deploy with the blue-falcon-42 token.")
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"
    done = edit_item(store, item_id, f"Deploy with OPENAI_API_KEY={secret}", redactor=store.ports.redactor)
    assert done.redactions == 1 and secret not in done.text
    assert all(secret not in str(e.__dict__) for e in events(store, item_id))
    with pytest.raises(EditRefused, match="needs text"):
        edit_item(store, item_id, "   ")


def test_pinned_items_come_first_in_context_and_unpinning_is_an_event_too(memory_store: Store) -> None:
    store = memory_store
    accepted, proposed = save(
        store,
        item(API, "Accepted: tests run with make test.", trust=Trust.ACCEPTED),
        item(API, "Proposed: the staging host is slow on Mondays."),
    )
    before = context(store.reads(), store.matcher(), Words(), "How to use memory.", API, 2000)
    assert before.item_ids == (UUID(accepted), UUID(proposed))

    pinned = pin_item(store, UUID(proposed), editor="dana")

    assert pinned.as_dict() == {"item": proposed, "pinned": True, "changed": True}
    after = context(store.reads(), store.matcher(), Words(), "How to use memory.", API, 2000)
    assert after.item_ids == (UUID(proposed), UUID(accepted))
    assert "(api, pinned) [item:" in after.text
    assert store.reads().item(UUID(proposed), API).pinned  # type: ignore[union-attr]
    assert not pin_item(store, UUID(proposed)).changed
    assert pin_item(store, UUID(proposed), pinned=False).changed
    kinds = [type(e).__name__ for e in events(store, UUID(proposed))]
    assert kinds == ["Added", "Pinned", "Unpinned"]
    found = store.history().explain(UUID(proposed), store.matcher())
    assert found is not None
    story = found.as_dict()
    assert story is not None and [h["action"] for h in story["history"]] == ["added", "pinned", "unpinned"]
    assert story["now"]["pinned"] is False


def test_a_scope_change_moves_the_item_between_projects_and_the_user(memory_store: Store) -> None:
    store = memory_store
    (raw,) = save(store, item(API, "Prefers small commits with clear messages."))
    item_id = UUID(raw)
    assert store.reads().item(item_id, WEB) is None

    moved = change_scope(store, item_id, "global", editor="dana")

    assert moved.as_dict() == {"item": raw, "scope": "global", "previous": API, "changed": True}
    assert store.reads().item(item_id, WEB) is not None  # every project reads a user-wide item
    assert [h.item.item_id for h in store.reads().search("commits", WEB, None, 5)] == [item_id]
    back = change_scope(store, item_id, API)
    assert back.previous == "global" and store.reads().item(item_id, WEB) is None
    found = store.history().explain(item_id, store.matcher())
    assert found is not None
    story = found.as_dict()
    assert story is not None and story["scope"] == API
    assert [(h["previous"], h["scope"]) for h in story["history"] if h["action"] == "scope changed"] == [(API, "global"), ("global", API)]
    with pytest.raises(EditRefused, match="not a scope"):
        change_scope(store, item_id, "somewhere")
    assert not change_scope(store, item_id, API).changed


def test_another_projects_item_and_retired_items_are_not_edited(memory_store: Store) -> None:
    store = memory_store
    web_item, gone = save(store, item(WEB, "Web builds with vite."), item(API, "Old deploy script."))
    target = store.app.repository.get(UUID(gone))
    target.retire("test")
    store.app.save_all(target)

    for call in (
        lambda: edit_item(store, UUID(web_item), "changed", project=API),
        lambda: pin_item(store, UUID(web_item), project=API),
        lambda: change_scope(store, UUID(web_item), "global", project=API),
    ):
        with pytest.raises(ItemNotFound, match="no memory item"):
            call()
    with pytest.raises(EditRefused, match="retired"):
        pin_item(store, UUID(gone))
    with pytest.raises(ItemNotFound):
        edit_item(store, UUID(int=7), "text")
    assert len(events(store, UUID(web_item))) == 1
