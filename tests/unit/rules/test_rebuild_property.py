"""For any sequence of events, the views built step by step equal a rebuild from the whole log.

Runs on the in-memory store (POPO log, SQLite ``:memory:`` views): sequences of
domain commands through the aggregates, the views caught up after each step,
then the whole log replayed into a fresh view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_memory_store
from mnemolog.domain.citation import Citation
from mnemolog.domain.consolidation import Consolidation, InputDiff, Override, SelectedInput
from mnemolog.domain.events import EventSourced
from mnemolog.domain.injection import Injection, ServedItem
from mnemolog.domain.memory_item import EditedBy, MemoryItem, Trust
from mnemolog.domain.note import Note
from mnemolog.domain.session import ClaimRefused, Session, SessionMode
from mnemolog.domain.tombstone import Tombstone
from mnemolog.projections.view_reads import ViewReads
from mnemolog.projections.view_store import open_sqlite_view, rebuild
from support.scenarios import TRANSCRIPT, facts

from .builders import API, FAST, NOW, WEB, forgetting, rule

SCOPES = (API, WEB, "global")
WORDS = ("retry", "make", "test", "staging", "deploy")


@dataclass
class World:
    """The aggregates made so far, so later commands can act on them."""

    store: Store
    sessions: list[Session] = field(default_factory=list)
    items: list[MemoryItem] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    tombstones: list[Tombstone] = field(default_factory=list)
    runs: list[Consolidation] = field(default_factory=list)
    clock: int = 0  # hours since NOW, for the times commands carry

    def now(self) -> datetime:
        self.clock += 1
        return NOW + timedelta(hours=self.clock)

    def save(self, *aggregates: EventSourced) -> None:
        self.store.app.save_all(*aggregates)
        self.store.catch_up()


def pick(things: list, index: int) -> Any:
    return things[index % len(things)] if things else None


Command = Callable[[World, int, int], "EventSourced | None"]
COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    """Register a command: it gets two small numbers to choose with, and returns what to save (None: nothing)."""

    def register(function: Command) -> Command:
        COMMANDS[name] = function
        return function

    return register


def word(b: int) -> str:
    return WORDS[b % len(WORDS)]


@command("session")
def record_session(world: World, a: int, b: int) -> Session:
    made = Session(facts=facts(f"n{len(world.sessions)}", scope=SCOPES[a % 2]), transcript=TRANSCRIPT)
    world.sessions.append(made)
    return made


def session_command(act: Callable[[Session, World, int, int], bool]) -> Command:
    def run(world: World, a: int, b: int) -> Session | None:
        session = pick(world.sessions, a)
        return session if session is not None and act(session, world, a, b) else None

    return run




@command("update")
@session_command
def update(session: Session, world: World, a: int, b: int) -> bool:
    grown = facts(session.facts.native_id, f"h{a}{b}", scope=session.facts.scope)
    return session.update(grown, TRANSCRIPT[: 1 + b % 3])


command("mode")(session_command(lambda s, w, a, b: s.change_mode(list(SessionMode)[b % 3], f"because {word(b)}")))
command("assess")(session_command(lambda s, w, a, b: s.assess(bool(b % 2), () if b % 2 else (f"not {word(b)}",))))
command("prune")(session_command(lambda s, w, a, b: s.prune("retention")))
command("delete")(session_command(lambda s, w, a, b: s.delete("forget --session")))
command("scrub session")(session_command(lambda s, w, a, b: s.scrub(forgetting(word(b)))))


def phase_one(outcome: str) -> Command:
    def act(session: Session, world: World, a: int, b: int) -> bool:
        try:
            session.claim_extraction("w1", world.now(), timedelta(minutes=5), 3)
        except ClaimRefused:
            return False
        if outcome == "extract":
            session.record_extraction(
                rollout_summary=f"Ran {word(b)}.", rollout_slug=word(b), raw_memory=f"- {word(b)} before pushing",
                model="heuristic", prompt_hash="p",
            )  # fmt: skip
        elif outcome == "fail":
            session.record_failure("HTTP 429", world.now() if b % 2 else None)
        else:
            session.record_nothing("heuristic", "p")
        return True

    return session_command(act)


for outcome in ("extract", "fail", "nothing"):
    command(outcome)(phase_one(outcome))


@command("add")
def add_item(world: World, a: int, b: int) -> MemoryItem:
    made = MemoryItem(
        kind=("knowledge", "preference", "skill")[b % 3], scope=SCOPES[a % 3], task_group="api",
        title=f"{word(b)} title", text=f"Always {word(b)} first.", keywords=(word(b),),
        evidence=tuple(s.id for s in world.sessions[a % 3 : a % 3 + b % 3]), valid_from=None,
        consolidation_id=world.runs[b % len(world.runs)].id if world.runs else None, reason="seen",
    )  # fmt: skip
    world.items.append(made)
    return made


def item_command(act: Callable[[MemoryItem, World, int, int], bool | None]) -> Command:
    def run(world: World, a: int, b: int) -> MemoryItem | None:
        item = pick(world.items, a)
        return item if item is not None and act(item, world, a, b) is not False else None

    return run


def revise(item: MemoryItem, world: World, a: int, b: int) -> bool:
    if not item.is_active:  # phase 2 and the user only revise current items
        return False
    item.revise(
        title=item.title, text=f"{item.text} Then {word(b)}.", keywords=(*item.keywords, word(b)),
        evidence=tuple(s.id for s in world.sessions[: b % 3]), valid_from=NOW if b % 2 else None,
        consolidation_id=None, reason="more", by=EditedBy.MODEL,
    )  # fmt: skip
    return True


def retire(item: MemoryItem, world: World, a: int, b: int) -> bool:
    tombstone = pick(world.tombstones, b)
    return item.retire("stale", by=EditedBy.CODE, tombstone_id=tombstone.id if tombstone else None)


command("revise")(item_command(revise))
command("retire")(item_command(retire))
command("invalidate")(item_command(lambda i, w, a, b: i.invalidate(w.now(), "superseded")))
command("review")(item_command(lambda i, w, a, b: i.review(list(Trust)[b % 4], "dev", note=word(b))))


@command("note")
def record_note(world: World, a: int, b: int) -> Note:
    made = Note(
        text=f"Remember to {word(b)}", intent=("remember", "correct")[b % 2], scope=SCOPES[a % 3],
        source="cli", written_at=world.now(),
    )  # fmt: skip
    world.notes.append(made)
    return made


@command("apply note")
def apply_note(world: World, a: int, b: int) -> Note | None:
    note, run = pick(world.notes, a), pick(world.runs, b)
    if note is None or run is None or note.applied_by is not None:
        return None
    note.mark_applied(run.id)
    return note


@command("scrub note")
def scrub_note(world: World, a: int, b: int) -> Note | None:
    note = pick(world.notes, a)
    return note if note is not None and note.scrub(forgetting(word(b))) else None


@command("tombstone")
def place_tombstone(world: World, a: int, b: int) -> Tombstone | None:
    placed = rule(f"{word(b)} {a}", SCOPES[b % 3])
    if any(t.id == placed.tombstone_id for t in world.tombstones):
        return None  # the same value in the same scope is one tombstone
    made = Tombstone(digest=placed.digest, width=placed.width, scope=placed.scope, reason="asked")
    world.tombstones.append(made)
    return made


def tombstone_command(act: Callable[[Tombstone, int], bool | None]) -> Command:
    def run(world: World, a: int, b: int) -> Tombstone | None:
        tombstone = pick(world.tombstones, a)
        return tombstone if tombstone is not None and act(tombstone, b) is not False else None

    return run


command("lift")(tombstone_command(lambda t, b: t.lift("mistake")))
command("replace")(tombstone_command(lambda t, b: t.replace("asked again")))
command("suppress")(tombstone_command(lambda t, b: t.record_suppression(("extraction", "read")[b % 2], str(b))))


@command("cite")
def cite(world: World, a: int, b: int) -> Citation | None:
    if not (world.items or world.sessions):
        return None
    return Citation(
        item_ids=tuple(i.id for i in world.items[a % 3 : a % 3 + 2]),
        session_ids=tuple(s.id for s in world.sessions[b % 3 : b % 3 + 2]),
        citing_session=None, cited_at=world.now(), source="cli",
    )  # fmt: skip


@command("serve")
def serve(world: World, a: int, b: int) -> Injection | None:
    if not world.items:
        return None
    served = tuple(
        ServedItem(item_id=i.id, rank=n + 1, trust="proposed", citations=0, updated_at=None, why="proposed")
        for n, i in enumerate(world.items[a % 3 : a % 3 + 2])
    )
    return Injection(session=("s1", "s2", None)[a % 3], project=SCOPES[b % 3], surface="hook", items=served,
                     tokens=10 + a, served_at=world.now())  # fmt: skip


@command("rerecord item")
def rerecord_item(world: World, a: int, b: int) -> MemoryItem | None:
    item = pick(world.items, a)
    if item is not None:
        item.rerecord(forgetting(word(b)))
    return item


@command("rerecord session")
def rerecord_session(world: World, a: int, b: int) -> Session | None:
    session = pick(world.sessions, a)
    if session is not None:
        session.rerecord(forgetting(word(b)))
    return session


@command("run")
def start_run(world: World, a: int, b: int) -> Consolidation:
    selection = tuple(
        SelectedInput(session_id=s.id, content_hash=s.content_hash, rank=r + 1)
        for r, s in enumerate(world.sessions[: b % 4])
    )
    made = Consolidation(
        selection=selection, previous_selection=(), diff=InputDiff(added=tuple(s.session_id for s in selection)),
        worker="w1", model="heuristic",
    )  # fmt: skip
    world.runs.append(made)
    return made


def run_command(act: Callable[[Consolidation, World, int, int], bool | None]) -> Command:
    def run(world: World, a: int, b: int) -> Consolidation | None:
        consolidation = pick(world.runs, a)
        return consolidation if consolidation is not None and act(consolidation, world, a, b) is not False else None

    return run


def complete(run: Consolidation, world: World, a: int, b: int) -> bool:
    if run.status != "running":
        return False
    run.complete(
        added=a, revised=b, retired=0, invalidated=0, model="heuristic", prompt_hash="p",
        overrides=(Override(action="retired", reason="all evidence is gone"),) if b % 2 else (),
        user_profile=f"Likes to {word(b)}.", notes_applied=tuple(n.id for n in world.notes[:1]),
    )  # fmt: skip
    return True


def fail(run: Consolidation, world: World, a: int, b: int) -> bool:
    if run.status != "running":
        return False
    run.fail("the plan broke 1 rule(s)", (Override(action="rejected", reason="no evidence", edit="edit 1: add"),))
    return True


command("complete")(run_command(complete))
command("fail run")(run_command(fail))
command("scrub profile")(run_command(lambda r, w, a, b: r.scrub_profile(forgetting(word(b)))))


def step(world: World, op: str, a: int, b: int) -> None:
    """Run one command and catch the views up; a command with nothing to act on does nothing."""
    changed = COMMANDS[op](world, a, b)
    if changed is not None:
        world.save(changed)


STEPS = st.lists(
    st.tuples(st.sampled_from(sorted(COMMANDS)), st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=30
)
SETTINGS = Settings(home=Path("/nonexistent/mnemolog-home"))  # nothing here writes to home


@FAST
@given(steps=STEPS)
def test_incremental_views_equal_a_rebuild(steps: list[tuple[str, int, int]]) -> None:
    world = World(open_memory_store(SETTINGS))
    try:
        for op, a, b in steps:
            step(world, op, a, b)
        incremental = ViewReads(world.store.view).dump()

        fresh = open_sqlite_view(":memory:", embed_texts=world.store.view.embed_texts)  # the same model embeds
        try:
            replayed = rebuild(world.store.app, fresh)
            assert replayed == world.store.app.max_notification_id()
            assert ViewReads(fresh).dump() == incremental
        finally:
            fresh.datastore.close()
    finally:
        world.store.close()


def test_the_commands_reach_every_view_table() -> None:
    """The generator is not idle: one scripted sequence fills every table the dump compares."""
    world = World(open_memory_store(SETTINGS))
    script = [("session", 0, 0), ("session", 1, 0), ("extract", 0, 0), ("add", 0, 1), ("note", 0, 0),
              ("tombstone", 0, 0), ("cite", 0, 0), ("run", 0, 2), ("add", 1, 1), ("complete", 0, 0), ("serve", 0, 0)]  # fmt: skip
    try:
        for op, a, b in script:
            step(world, op, a, b)
        dump = ViewReads(world.store.view).dump()
        assert {name for name, rows in dump.items() if not rows} == set()
    finally:
        world.store.close()
