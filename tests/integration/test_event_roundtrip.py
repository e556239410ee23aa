"""Every event type round-trips through SQLite and PostgreSQL with equal values."""

from __future__ import annotations

from support.scenarios import event_classes, every_event


def test_every_event_type_round_trips(store_factory) -> None:
    writer = store_factory()
    every_event(writer.app)
    written = [writer.app.mapper.to_domain_event(n) for n in writer.app.recorder.select_notifications(start=1, limit=1000)]

    reader = store_factory()  # a second connection to the same log
    read = [reader.app.mapper.to_domain_event(n) for n in reader.app.recorder.select_notifications(start=1, limit=1000)]

    assert read == written
    assert {type(e) for e in read} == event_classes(), "the scenario must cover every event type"
    for event in read:
        for name, value in event:
            assert type(value) is type(getattr(written[read.index(event)], name))
