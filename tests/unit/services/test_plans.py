"""Plan, then apply, on a store in memory: a plan names exactly what its apply changes, and writes nothing itself."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.services.forget import (
    plan_forget_item,
    plan_forget_session,
    plan_forget_value,
    plan_lift,
)
from mnemolog.domain.services.plans import CARRIES, QUOTES
from mnemolog.domain.services.retention import plan_prune, plan_reset
from support.forgetting import SECRET, quoted
from support.memory import extracted_session, item, save
from support.sessions import thread_id


def position(store: Store) -> int:
    written: int = store.app.recorder.max_notification_id() or 0
    return written


def test_a_forget_plan_names_every_item_session_note_and_profile_its_apply_changes(memory_store: Store) -> None:
    store = memory_store
    world = quoted(store)
    before = position(store)

    plan = plan_forget_value(store, SECRET, "global")

    assert position(store) == before  # planning writes nothing
    assert {(r.item_id, r.why) for r in plan.retired} == {(world.carrier, CARRIES), (world.quoting, QUOTES)}
    assert plan.sessions == (world.carrier_session,) and plan.notes == (world.note,) and plan.profiles == (world.run,)
    assert plan.tombstone == "place" and SECRET not in str(plan.as_dict()) and SECRET not in repr(plan)
    assert plan.as_dict()["retired_items"][0].keys() == {"id", "kind", "scope", "why"}

    done = plan.apply(store)

    assert set(done.retired) == {r.item_id for r in plan.retired}
    assert done.scrubbed_sessions == plan.sessions and done.scrubbed_notes == plan.notes and done.scrubbed_profiles == plan.profiles
    assert done.tombstone_id == plan.tombstone_id and done.written == position(store)
    assert [i.item_id for i in store.reads().active_items()] == [world.clean]
    again = plan_forget_value(store, SECRET, "global")  # what the first apply left: nothing
    assert again.already and again.retired == () and again.sessions == () and again.notes == () and again.profiles == ()


def test_apply_changes_no_more_than_its_plan_when_the_log_moved_meanwhile(memory_store: Store) -> None:
    store = memory_store
    world = quoted(store)
    plan = plan_forget_value(store, SECRET, "global")
    (late,) = save(store, item("global", f"Later: {SECRET} again."))  # written between the plan and its apply

    done = plan.apply(store)

    assert UUID(late) not in done.retired and set(done.retired) == {world.carrier, world.quoting}
    assert UUID(late) in {i.item_id for i in store.reads().active_items()}  # left to the tombstone at read time
    retired_twice = plan.apply(store)  # the same plan again: the tombstone is in force, nothing is left to retire
    assert retired_twice.already and retired_twice.retired == () and retired_twice.scrubbed_sessions == ()


def test_item_session_lift_prune_and_reset_plans_equal_what_apply_does(memory_store: Store) -> None:
    store = memory_store
    world = quoted(store)
    before = position(store)
    by_item = plan_forget_item(store, world.clean)
    by_session = plan_forget_session(store, thread_id(2))
    pruned = plan_prune(store, retention=timedelta(days=30), limit=0)
    everything = plan_reset(store)
    assert position(store) == before

    assert [r.item_id for r in by_item.value.retired] == [world.clean] and by_item.value.scope == world_scope(store, world.clean)
    assert by_session.session_id == world.clean_session and [r.item_id for r in by_session.retired] == [world.clean]
    assert {r.item_id for r in everything.retired} == {world.carrier, world.quoting, world.clean}
    session_done = by_session.apply(store)
    assert session_done.deleted and session_done.retired == (world.clean,)
    assert by_item.apply(store).retired is False  # the session's delete retired it meanwhile: the item plan finds it gone

    forgot = plan_forget_value(store, SECRET, "global").apply(store)
    lifting = plan_lift(store, forgot.tombstone_id, "test")
    assert lifting.sessions == (world.carrier_session,) and lifting.notes == (world.note,)
    lifted = lifting.apply(store)
    assert lifted.lifted and lifted.restored_sessions == lifting.sessions and lifted.restored_notes == lifting.notes

    old = extracted_session(store, thread_id(3), world_scope(store, world.clean), "An old task.", updated_at=store.clock() - timedelta(days=90))
    (orphan,) = save(store, item("global", "From the old task.", evidence=(old,)))
    store.clock.past_the_saves(days=31)  # its import too has left the window
    pruned = plan_prune(store, retention=timedelta(days=30), limit=0)
    assert old in pruned.sessions and UUID(orphan) in {r.item_id for r in pruned.retired}
    swept = pruned.apply(store)
    assert swept.sessions == pruned.sessions and set(swept.retired) == {r.item_id for r in pruned.retired}
    reset = plan_reset(store)
    withdrawn = reset.apply(store)
    assert set(withdrawn.retired) == {r.item_id for r in reset.retired} and store.reads().active_items() == []


def world_scope(store: Store, item_id: UUID) -> str:
    found = store.app.find(item_id)
    scope: str = found.scope
    return scope
