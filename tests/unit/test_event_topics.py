"""Stored type names stay resolvable: moving an event class needs its old name registered."""

from __future__ import annotations

import os
from pathlib import Path

import mnemolog.domain.application  # noqa: F401  (registers legacy topics)
from eventsourcing.utils import get_topic, resolve_topic
from support.scenarios import event_classes

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "event_topics.txt"


def current_topics() -> set[str]:
    topics = {get_topic(cls) for cls in event_classes()}
    topics |= {get_topic(_aggregate_of(cls)) for cls in event_classes()}
    return topics


def _aggregate_of(event_class: type) -> type:
    import sys

    module = sys.modules[event_class.__module__]
    return getattr(module, event_class.__qualname__.split(".")[0])


def test_every_stored_topic_still_resolves() -> None:
    if os.environ.get("UPDATE_GOLDEN"):
        known = set(GOLDEN.read_text().split()) if GOLDEN.exists() else set()
        GOLDEN.write_text("\n".join(sorted(known | current_topics())) + "\n")
    for topic in GOLDEN.read_text().split():
        resolve_topic(topic)  # raises TopicError when a class moved without registration


def test_every_current_topic_is_recorded_in_the_golden_list() -> None:
    missing = current_topics() - set(GOLDEN.read_text().split())
    assert not missing, f"new event types: add them with UPDATE_GOLDEN=1 ({sorted(missing)})"
