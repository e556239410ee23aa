"""Several processes catching the views up at once: each event is applied once, nobody fails."""

from __future__ import annotations

import threading

from mnemolog.domain.session import Session
from mnemolog.projections.reads import ViewReads
from support.scenarios import TRANSCRIPT, facts


def test_concurrent_catch_ups_apply_each_event_once(store_factory) -> None:
    writer = store_factory()
    for batch in range(10):
        writer.app.save_all(*(Session(facts=facts(f"s-{batch}-{n}"), transcript=TRANSCRIPT) for n in range(100)))
    readers = [store_factory() for _ in range(4)]
    errors: list[BaseException] = []

    def catch_up(store) -> None:
        try:
            store.catch_up()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=catch_up, args=(s,)) for s in readers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    rows = ViewReads(readers[0].view).dump()["sessions"]
    assert len(rows) == 1000
    assert readers[0].lag() == 0
