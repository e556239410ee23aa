"""Stored names of event and aggregate types.

The log stores each event's type as a topic (``module:QualName``). Moving or
renaming a class would orphan every stored event of that type, so the old
topic must be registered here, mapped to the class's new home. A test keeps a
list of every topic ever written (tests/golden/event_topics.txt) and fails
when one stops resolving.
"""

from __future__ import annotations

from eventsourcing.utils import register_topic, resolve_topic

# old topic -> new topic, e.g. "mnemolog.domain.session:Session.Recorded":
#                              "mnemolog.domain.sessions:Session.Recorded"
LEGACY_TOPICS: dict[str, str] = {}


def register_legacy_topics() -> None:
    """Make every old topic resolve to the class that now holds it."""
    for old, new in LEGACY_TOPICS.items():
        register_topic(old, resolve_topic(new))
