"""Reads withhold what the tombstones in force withhold now, though the matcher remembers what it read before.

The store keeps one tombstone matcher while the tombstones stay the same, and
the matcher remembers what it found in each text it read. Each test reads an
item once (so a verdict is remembered), then changes what the verdict rests
on: the item's text, a tombstone placed, a tombstone lifted. ``search``,
``show`` and the context must all follow.
"""

from __future__ import annotations

from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.services.forget import forget_value, lift
from support.memory import item, save
from support.reading import context_for, search_ids, show
from support.stores import StoreFactory

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"
VALUE = "orion deploy key"
FOLDED = "ＯＲＩＯＮ Deploy_Key"  # fullwidth, capitals, an underscore: the matcher folds it to VALUE


def seen_by(store: Store, item_id: str, project: str) -> dict[str, bool]:
    """Whether each read of ``project`` returns the item (every read asks the store's matcher)."""
    return {
        "search": item_id in search_ids(store, "staging gate", project),
        "show": show(store, item_id, project) is not None,
        "context": UUID(item_id) in context_for(store, project).item_ids,
    }


SHOWN = {"search": True, "show": True, "context": True}
WITHHELD = {"search": False, "show": False, "context": False}


def test_an_item_edited_to_hold_a_forgotten_value_after_it_was_read_is_withheld(store_factory: StoreFactory) -> None:
    store = store_factory()
    forget_value(store, VALUE, API)
    (item_id,) = save(store, item(API, "Deploys go through the staging gate.", title="Staging gate"))
    assert seen_by(store, item_id, API) == SHOWN  # read clean, and remembered so
    # Written past the edit check (an older version, a hand-made event): the read is the guard that is left.
    found: MemoryItem = store.app.repository.get(UUID(item_id))
    assert found.edit(f"Deploys go through the staging gate with {FOLDED}.", "Staging gate", editor="someone")
    store.app.save_all(found)
    store.catch_up()
    assert seen_by(store, item_id, API) == WITHHELD


def test_a_tombstone_placed_after_an_item_was_read_withholds_it_and_its_lift_shows_it_again(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    forget_value(store, "hunter2", "global")  # a tombstone in force already: the matcher reads and remembers
    (item_id,) = save(store, item("global", f"Open the staging gate with the {FOLDED}.", title="Staging gate"))
    assert seen_by(store, item_id, API) == SHOWN
    placed = forget_value(store, VALUE, API)  # a project's tombstone leaves the user's global item in place
    assert placed.retired == ()
    assert seen_by(store, item_id, API) == WITHHELD
    assert seen_by(store, item_id, WEB) == SHOWN  # another project still reads it
    lift(store, placed.tombstone_id, "by mistake")
    assert seen_by(store, item_id, API) == SHOWN


def test_a_tombstone_placed_by_another_store_is_read_at_once(store_factory: StoreFactory) -> None:
    reader, writer = store_factory(), store_factory()  # two processes on one store
    forget_value(reader, "hunter2", "global")
    (item_id,) = save(reader, item("global", f"Open the staging gate with the {FOLDED}.", title="Staging gate"))
    assert seen_by(reader, item_id, API) == SHOWN
    writer.catch_up()
    forget_value(writer, VALUE, API)
    writer.catch_up()  # the writer's views hold the tombstone: the reader reads the same views
    assert seen_by(reader, item_id, API) == WITHHELD
