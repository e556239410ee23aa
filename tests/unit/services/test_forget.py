"""The forget services on a store in memory: forget a value, a session, an item; lift a tombstone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.consolidation import Consolidation, InputDiff
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.services.forget import (
    NotFound,
    forget_item,
    forget_session,
    forget_value,
    lift,
)
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import EVERY_PROJECT
from support.memory import extracted_session, item, save
from support.sessions import thread_id

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"
SECRET = "blue-falcon-42"
DAY = datetime(2026, 10, 20, tzinfo=UTC)


def session(store: Store, n: int, scope: str, summary: str) -> UUID:
    return extracted_session(store, thread_id(n), scope, summary, updated_at=DAY + timedelta(hours=n))


def completed_run(store: Store, profile: str) -> UUID:
    """A finished consolidation that wrote a user profile."""
    run = Consolidation(selection=(), previous_selection=(), diff=InputDiff(), worker="test", model="scripted")
    run.complete(added=0, revised=0, retired=0, invalidated=0, overrides=(), model="scripted", prompt_hash="p", user_profile=profile)
    store.app.save_all(run)
    store.catch_up()
    run_id: UUID = run.id
    return run_id


def raw_states_after(store: Store, position: int) -> list[bytes]:
    return [bytes(n.state) for n in store.app.recorder.select_notifications(start=position + 1, limit=10_000)]


def events(store: Store, aggregate_id: UUID | str) -> list[object]:
    return list(store.app.events.get(UUID(str(aggregate_id))))


def test_forgetting_a_value_retires_its_items_and_scrubs_sessions_notes_and_profiles(memory_store: Store) -> None:
    store = memory_store
    carrier_session = session(store, 1, API, f"Deployed with {SECRET} on staging.")
    clean_session = session(store, 2, API, "Added the export endpoint.")
    carrier, clean, user_pref = save(
        store,
        item(API, f"Deploy with {SECRET} on staging.", evidence=(carrier_session,)),
        item(API, "Endpoints stream CSV in chunks.", evidence=(clean_session,)),
        item("global", "The user deploys on Fridays.", kind="preference", keywords=(SECRET,)),
    )
    note = Note(text=f"Remember {SECRET} on Fridays", intent="remember", scope="global", source="cli", written_at=DAY)
    store.app.save_all(note)
    run = completed_run(store, f"Deploys with {SECRET}.")
    before = store.app.max_notification_id()

    report = forget_value(store, SECRET.upper(), "global", reason=f"never say {SECRET}")  # normalised: case does not matter

    assert set(report.retired) == {UUID(carrier), UUID(user_pref)} and not report.already
    assert report.scrubbed_sessions == (carrier_session,)
    assert report.as_dict() == {
        "tombstone": str(report.tombstone_id),
        "scope": "global",
        "already": False,
        "retired": [str(i) for i in report.retired],
        "scrubbed_sessions": [str(carrier_session)],
        "scrubbed_notes": [str(note.id)],
        "scrubbed_profiles": [str(run)],
    }
    assert report.written == store.app.max_notification_id()
    reads = store.reads()  # read-your-writes: the service wrote, the views wait once
    assert [str(i.item_id) for i in reads.active_items()] == [clean]
    texts = {t.session_id: " ".join(t.texts) for t in reads.session_texts()}
    assert SECRET not in " ".join(texts.values()) and "[forgotten]" in texts[carrier_session]
    assert [n.text for n in reads.pending_notes()] == ["Remember [forgotten] on Fridays"]
    assert reads.user_profile() == "Deploys with [forgotten]."
    assert not any(SECRET.encode() in s or b"falcon" in s.lower() for s in raw_states_after(store, before))
    story = events(store, report.tombstone_id)
    assert isinstance(story[0], Tombstone.Placed) and story[0].reason == "never say [forgotten]"
    suppressed = {(e.where, e.subject) for e in story if isinstance(e, Tombstone.Suppressed)}
    assert {w for w, _ in suppressed} == {"item", "extraction", "note", "profile"} and ("profile", str(run)) in suppressed
    retired = events(store, carrier)[-1]
    assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.USER and retired.tombstone_id == report.tombstone_id

    again = forget_value(store, SECRET, "global")
    assert again.tombstone_id == report.tombstone_id and again.already and again.retired == () and again.scrubbed_sessions == ()
    with pytest.raises(ValueError):
        forget_value(store, " -- ", "global")


def test_a_project_tombstone_retires_that_projects_items_and_is_withheld_from_its_reads(memory_store: Store) -> None:
    store = memory_store
    in_api = session(store, 1, API, f"Deployed with {SECRET}.")
    in_web = session(store, 2, WEB, f"Deployed with {SECRET}.")
    api_item, web_item, global_item = save(
        store,
        item(API, f"Deploy with {SECRET}.", evidence=(in_api,)),
        item(WEB, f"Deploy with {SECRET}.", evidence=(in_web,)),
        item("global", f"The user deploys with {SECRET}.", kind="preference"),
    )

    report = forget_value(store, SECRET, API)

    assert report.scope == API and report.retired == (UUID(api_item),)
    assert report.scrubbed_sessions == (in_api,)  # the other project's session keeps its text
    reads = store.reads()
    active = {str(i.item_id): i for i in reads.active_items()}
    assert set(active) == {web_item, global_item}  # a global item stays for the other projects ...
    matcher = store.matcher()
    assert matcher.withholds(active[global_item], API)  # ... and is withheld from this one's reads
    assert matcher.withholds(active[global_item], EVERY_PROJECT)  # and from the shared folder, read in this one too
    assert not matcher.withholds(active[global_item], WEB) and not matcher.withholds(active[web_item], WEB)


def test_forgetting_a_session_retires_only_the_items_it_was_the_sole_evidence_of(memory_store: Store) -> None:
    store = memory_store
    first = session(store, 1, API, "Fixed the retry test.")
    second = session(store, 2, API, "Sped the tests up.")
    only_first, both, none = save(
        store,
        item(API, "The retry test is flaky under load.", evidence=(first,)),
        item(API, "Run make test-fast before pushing.", evidence=(first, second)),
        item("global", "The user prefers short answers.", kind="preference"),
    )

    report = forget_session(store, thread_id(1))  # by the agent's own id

    assert report.as_dict() == {"session": str(first), "deleted": True, "retired": [only_first]}
    retired = events(store, only_first)[-1]
    assert isinstance(retired, MemoryItem.Retired) and retired.by == EditedBy.CODE
    assert {str(i.item_id) for i in store.reads().active_items()} == {both, none}
    assert first not in store.reads().live_session_ids()
    again = forget_session(store, first)  # by its mnemolog id
    assert not again.deleted and again.retired == ()
    with pytest.raises(NotFound, match="no session no-such-session"):
        forget_session(store, "no-such-session")
    with pytest.raises(NotFound):
        forget_session(store, UUID(int=3))


def test_forgetting_an_item_tombstones_its_text_in_its_scope(memory_store: Store) -> None:
    store = memory_store
    evidence = session(store, 1, API, "Set up the build.")
    target, twin, elsewhere, wordless = save(
        store,
        item(API, "Use pnpm, not npm.", evidence=(evidence,)),
        item(API, "Use pnpm, not npm.", title="Package manager"),
        item(WEB, "Use pnpm, not npm."),
        item(API, "!!!"),
    )

    report = forget_item(store, UUID(target))

    assert report.retired and report.also_retired == (UUID(twin),)
    assert report.as_dict() == {
        "item": target, "retired": True, "tombstone": str(report.tombstone_id), "also_retired": [twin], "scrubbed_sessions": [], "scrubbed_notes": [],
    }
    reads = store.reads()
    assert {str(i.item_id) for i in reads.active_items()} == {elsewhere, wordless}  # another project's item stays
    assert [(r.tombstone_id, r.scope) for r in reads.tombstone_rules()] == [(report.tombstone_id, API)]
    with pytest.raises(NotFound):
        forget_item(store, UUID(int=4))
    with pytest.raises(ValueError):
        forget_item(store, UUID(wordless))


def test_lifting_a_tombstone_is_an_event_and_retired_items_stay_retired(memory_store: Store) -> None:
    store = memory_store
    (carrier,) = save(store, item(API, f"Deploy with {SECRET}."))
    placed = forget_value(store, SECRET, "global")

    lifted = lift(store, placed.tombstone_id, "by mistake")

    assert lifted.as_dict() == {"tombstone": str(placed.tombstone_id), "lifted": True, "restored_sessions": [], "restored_notes": []}
    assert store.reads().tombstone_rules() == [] and store.reads().active_items() == []
    assert isinstance(events(store, carrier)[-1], MemoryItem.Retired)
    assert not lift(store, placed.tombstone_id, "twice").lifted
    rearmed = forget_value(store, SECRET, "global")
    assert not rearmed.already and isinstance(events(store, placed.tombstone_id)[-1], Tombstone.Replaced)
    with pytest.raises(NotFound):
        lift(store, UUID(int=7), "x")


def test_lifting_restores_what_the_tombstone_cut_and_keeps_other_cuts(memory_store: Store) -> None:
    store = memory_store
    carrier = session(store, 1, API, f"Deployed with {SECRET} on staging; token hunter2 rotated.")
    store.app.save_all(Note(text=f"Remember {SECRET} on Fridays", intent="remember", scope="global", source="cli", written_at=DAY))
    other = forget_value(store, "hunter2", "global")
    placed = forget_value(store, SECRET, "global")
    texts = {t.session_id: " ".join(t.texts) for t in store.reads().session_texts()}
    assert SECRET not in texts[carrier] and "hunter2" not in texts[carrier]

    lifted = lift(store, placed.tombstone_id, "mistake")

    assert lifted.lifted and lifted.restored_sessions == (carrier,) and len(lifted.restored_notes) == 1
    reads = store.reads()
    texts = {t.session_id: " ".join(t.texts) for t in reads.session_texts()}
    assert f"Deployed with {SECRET} on staging" in texts[carrier]
    assert "hunter2" not in texts[carrier] and "[forgotten]" in texts[carrier]  # the other tombstone still cuts
    assert [n.text for n in reads.pending_notes()] == [f"Remember {SECRET} on Fridays"]
    restored = events(store, carrier)[-1]
    assert type(restored).__name__ == "Restored" and restored.tombstone_ids == (placed.tombstone_id,)
    again = lift(store, placed.tombstone_id, "twice")
    assert not again.lifted and again.restored_sessions == ()  # nothing more to put back
    assert lift(store, other.tombstone_id, "also").restored_sessions == (carrier,)
    assert "hunter2" in " ".join(t for s in store.reads().session_texts() for t in s.texts)
