"""Several processes catching the views up at once: each event is applied once, nobody fails."""

from __future__ import annotations

import threading
from collections.abc import Callable

from mnemolog.adapters.store import Store
from mnemolog.domain.session import Session
from mnemolog.projections.view_reads import ViewReads
from support.memory import item
from support.scenarios import TRANSCRIPT, facts

PROJECT = "git:example.com/acme/api"


def _catching_up(errors: list[BaseException]) -> Callable[[Store], None]:
    """A thread body: catch ``store``'s views up, keeping whatever it raised in ``errors``."""

    def catch_up(store: Store) -> None:
        try:
            store.catch_up()
        except BaseException as error:
            errors.append(error)

    return catch_up


def test_concurrent_catch_ups_apply_each_event_once(store_factory) -> None:
    writer = store_factory()
    for batch in range(10):
        writer.app.save_all(*(Session(facts=facts(f"s-{batch}-{n}"), transcript=TRANSCRIPT) for n in range(100)))
    readers = [store_factory() for _ in range(4)]
    errors: list[BaseException] = []
    catch_up = _catching_up(errors)
    threads = [threading.Thread(target=catch_up, args=(s,)) for s in readers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    rows = ViewReads(readers[0].view).dump()["sessions"]
    assert len(rows) == 1000
    assert readers[0].views_position() == readers[0].log_position()


def test_a_catch_up_that_another_overtakes_while_it_reads_still_succeeds(store_factory) -> None:
    """The SessionStart hook caught up while a capture did: the hook failed with "database is locked".

    The first catch-up has read the item rows it changes and is counting their
    lines when a second one applies the same events and commits. On SQLite a
    deferred transaction could then not write at all; now it holds the write lock
    from its start, so the second waits for it instead, and both end without error.
    """
    writer = store_factory()
    writer.app.save_all(*[item(PROJECT, f"Advice {n}: run the checks {n} times.", title=f"T{n}") for n in range(20)])  # not caught up
    first, second = store_factory(), store_factory()
    counting, overtaken = threading.Event(), threading.Event()
    count = first.view.count_tokens
    assert count is not None

    def slow_count(text: str) -> int:
        if not counting.is_set():
            counting.set()
            overtaken.wait(timeout=1.0)  # with the write lock held, the second cannot commit: it waits, and so do we, 1 s
        return count(text)

    first.view.count_tokens = slow_count
    errors: list[BaseException] = []
    catch_up = _catching_up(errors)
    reader = threading.Thread(target=catch_up, args=(first,))
    reader.start()
    assert counting.wait(timeout=30)
    catch_up(second)
    overtaken.set()
    reader.join()

    assert errors == []
    assert first.views_position() == second.views_position() == first.log_position()
    assert len(first.reads().context_items(PROJECT, 0, 100)) == 20
