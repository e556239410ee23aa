"""Views follow writes made by another process: LISTEN/NOTIFY on PostgreSQL, polling on SQLite."""

from __future__ import annotations

import threading
import time

from mnemolog.domain.session import Session
from mnemolog.projections.schema import table
from mnemolog.projections.view_reads import ViewReads
from support.scenarios import TRANSCRIPT, facts


def native_ids(store) -> set[str]:
    return {r["native_id"] for r in ViewReads(store.view).query(f"SELECT native_id FROM {table('sessions')}")}


def test_a_follower_applies_what_another_writer_appends(store_factory) -> None:
    follower, writer = store_factory(), store_factory()
    writer.app.save_all(Session(facts=facts("before"), transcript=TRANSCRIPT))
    stop = threading.Event()
    errors: list[BaseException] = []

    def follow() -> None:
        try:
            follower.follow(interval=0.05, stop=stop)
        except BaseException as error:  # surfaced below
            errors.append(error)

    thread = threading.Thread(target=follow)
    thread.start()
    try:
        time.sleep(1.0)  # the follower is subscribed (or polling) before these writes
        for n in range(5):
            writer.app.save_all(Session(facts=facts(f"while-{n}"), transcript=TRANSCRIPT))
        deadline = time.monotonic() + 15
        while native_ids(follower) != {"before", *(f"while-{n}" for n in range(5))} and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=20)
    assert not errors
    assert native_ids(follower) == {"before", *(f"while-{n}" for n in range(5))}
    assert follower.views_position() == follower.log_position()
    # the views the follower built equal a rebuild from the log
    followed = ViewReads(follower.view).dump()
    follower.rebuild()
    assert ViewReads(follower.view).dump() == followed
