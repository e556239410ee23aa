"""forget, lift, prune, reset as events; the raw log never repeats a forgotten value after the forget."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.services import forget as forgetting
from mnemolog.domain.services import retention
from mnemolog.domain.services.forget import NotFound
from mnemolog.domain.tombstone import Tombstone
from support.forgetting import SECRET, SENTENCE, start
from support.stores import FixedClock


def raw_states(store, start: int = 1) -> list[bytes]:
    """The stored bytes of every event from ``start`` on (what a database reader sees)."""
    return [bytes(n.state) for n in store.app.recorder.select_notifications(start=start, limit=100_000)]


def test_after_forget_the_raw_log_holds_the_value_only_in_earlier_events(store_factory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock())
    sc = start(store, tmp_path)
    before_forget = store.app.max_notification_id()
    needle = SECRET.encode()
    # Session text is sealed under data keys: no stored byte holds it in clear, but the keys still open it.
    assert not any(needle in s for s in raw_states(store)), "sealed text is never stored in clear"
    assert any(SECRET in item.text for e in store.app.events.get(sc.source) for item in getattr(e, "transcript", ()))

    result = forgetting.forget_value(store, SECRET, "global", reason=f"never say {SECRET}")
    # the models keep bringing it back; the session file grows with it too
    sc.adversarial = True
    path = next(sc.folder.glob(f"*{sc.threads[0]}.jsonl"))
    line = {"timestamp": "2026-10-20T12:00:00.000Z", "type": "event_msg", "payload": {"type": "user_message", "message": f"Again: {SENTENCE}."}}
    path.write_text(path.read_text() + json.dumps(line) + "\n")
    sc.write(3, "Add the import endpoint.", "2026-10-22T10:00:00.000Z")
    sc.round()

    after = raw_states(store, before_forget + 1)
    assert len(after) > 5
    assert not any(needle in s for s in after), "no event written after the forget repeats the value"
    assert not any(b"falcon" in s.lower() for s in after)
    assert any(SECRET in item.text for e in store.app.events.get(sc.source) for item in getattr(e, "transcript", ())), (
        "the history keeps the value (readable with its keys) until an erase destroys them"
    )
    # the suppressions are events that name the tombstone
    events = list(store.app.events.get(result.tombstone_id))
    assert isinstance(events[0], Tombstone.Placed) and events[0].reason == "never say [forgotten]"
    where = {e.where for e in events if isinstance(e, Tombstone.Suppressed)}
    assert {"item", "extraction"} <= where
    assert result.retired and all(
        isinstance(e := list(store.app.events.get(i))[-1], MemoryItem.Retired) and e.tombstone_id == result.tombstone_id and e.by == EditedBy.USER
        for i in result.retired
    )


def test_forget_again_lift_and_re_arm(store_factory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock())
    start(store, tmp_path)
    first = forgetting.forget_value(store, SECRET, "global")
    again = forgetting.forget_value(store, SECRET.upper(), "global")  # normalised: the same tombstone
    assert again.tombstone_id == first.tombstone_id and again.already and not again.retired
    assert forgetting.lift(store, first.tombstone_id, "by mistake").lifted
    assert not forgetting.lift(store, first.tombstone_id, "twice").lifted
    assert store.reads().tombstone_rules() == []
    rearmed = forgetting.forget_value(store, SECRET, "global")
    assert not rearmed.already and [r.tombstone_id for r in store.reads().tombstone_rules()] == [first.tombstone_id]
    story = [type(e) for e in store.app.events.get(first.tombstone_id)]
    assert Tombstone.Replaced in story[story.index(Tombstone.Lifted):]  # re-armed after the lift (then it scrubs again)
    with pytest.raises(NotFound):
        forgetting.lift(store, UUID(int=7), "x")


def test_a_project_tombstone_leaves_other_projects_alone(store_factory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock())
    start(store, tmp_path)
    other = forgetting.forget_value(store, SECRET, "git:github.com/acme/web")
    assert other.retired == ()
    here = forgetting.forget_value(store, SECRET, "git:github.com/acme/api")
    assert here.retired and here.tombstone_id != other.tombstone_id


def test_forget_session_and_item(store_factory, tmp_path: Path) -> None:
    store = store_factory(clock=FixedClock())
    sc = start(store, tmp_path)
    value_item = sc.value_items()[0]
    gone = forgetting.forget_session(store, sc.source)
    assert gone.deleted and value_item in gone.retired
    assert list(store.app.events.get(value_item))[-1].by == EditedBy.CODE
    with pytest.raises(NotFound):
        forgetting.forget_session(store, UUID(int=3))
    other = store.reads().active_items()[0]
    done = forgetting.forget_item(store, other.item_id)
    assert done.retired and store.reads().active_items() == []
    assert [r.tombstone_id for r in store.reads().tombstone_rules()] == [done.tombstone_id]
    with pytest.raises(NotFound):
        forgetting.forget_item(store, UUID(int=4))


def test_prune_and_reset_are_events(store_factory, tmp_path: Path) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock)
    sc = start(store, tmp_path)
    assert retention.prune(store).sessions == ()  # nothing is stale yet
    clock.past_the_saves(days=60)  # 60 days after the import
    pruned = retention.prune(store)
    assert sc.source in pruned.sessions and set(pruned.retired) == {i.item_id for i in store.reads().active_items()} | set(pruned.retired)
    assert store.reads().active_items() == []
    reset = retention.reset(store)
    assert reset.retired == ()
    assert store.app.max_notification_id() > 0  # the log and its history stay
