"""Two writers change the same aggregate at once: one conflicts; retrying loses nothing."""

from __future__ import annotations

import threading

import pytest
from eventsourcing.persistence import IntegrityError
from mnemolog.domain.session import Session, SessionMode
from support.scenarios import TRANSCRIPT, facts


def test_a_stale_write_conflicts_and_writes_nothing(store_factory) -> None:
    one, two = store_factory(), store_factory()
    session = Session(facts=facts("s-1"), transcript=TRANSCRIPT)
    one.app.save_all(session)

    a = one.app.repository.get(session.id)
    b = two.app.repository.get(session.id)
    a.change_mode(SessionMode.DISABLED, "by writer a")
    b.change_mode(SessionMode.POLLUTED, "by writer b")
    one.app.save_all(a)
    with pytest.raises(IntegrityError):
        two.app.save_all(b)

    events = list(two.app.events.get(session.id))
    assert [type(e).__name__ for e in events] == ["Recorded", "ModeChanged"]
    assert events[1].reason == "by writer a"


def test_retrying_commands_lose_and_duplicate_nothing(store_factory) -> None:
    stores = [store_factory(), store_factory()]
    session = Session(facts=facts("s-2"), transcript=TRANSCRIPT)
    stores[0].app.save_all(session)
    per_writer = 15

    def writer(index: int) -> None:
        app = stores[index].app
        for n in range(per_writer):
            def command(n: int = n) -> None:
                current = app.repository.get(session.id)
                current.assess(n % 2 == 0, (f"writer {index} step {n}",))
                app.save_all(current)

            app.retrying(command, attempts=50)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    events = list(stores[1].app.events.get(session.id))
    reasons = [e.reasons[0] for e in events[1:]]
    assert len(reasons) == 2 * per_writer
    assert sorted(reasons) == sorted(f"writer {i} step {n}" for i in range(2) for n in range(per_writer))
    assert [e.originator_version for e in events] == list(range(1, len(events) + 1))
