"""Reading the raw stored events, as an attacker with database access would."""

from __future__ import annotations

from mnemolog.adapters.store import Store


def raw_event_states(store: Store) -> list[bytes]:
    """The stored bytes of every event in the log, in order."""
    states: list[bytes] = []
    start = 1
    while True:
        batch = store.app.recorder.select_notifications(start=start, limit=500)
        if not batch:
            return states
        states.extend(bytes(n.state) for n in batch)
        start = batch[-1].id + 1


def raw_log_contains(store: Store, value: str) -> bool:
    """Whether any stored event holds ``value`` (as UTF-8 or as a JSON-escaped string)."""
    import json

    needles = {value.encode(), json.dumps(value)[1:-1].encode()}
    return any(needle in state for state in raw_event_states(store) for needle in needles)
