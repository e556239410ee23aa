"""Sealed text: stored encrypted under a data key of its aggregate; once the key is destroyed it reads [erased]."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import JSONTranscoder
from mnemolog.adapters.data_keys import MemoryKeys, SqliteKeys
from mnemolog.adapters.store import Store
from mnemolog.domain.events import EventSourced, PydanticMapper
from mnemolog.domain.evidence_spans import EvidenceSpan
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.sealing import (
    ERASED,
    SEALED_KEY,
    open_state,
    seal_model,
    seal_state,
    sealed_paths,
)
from mnemolog.domain.session import Session
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.domain.transcript import ItemKind, TranscriptItem
from pydantic import Field, field_serializer
from support.raw_events import raw_event_states
from support.scenarios import every_event, facts

TEXT = "Deploy with blue-falcon-42"


def _item(text: str = TEXT) -> MemoryItem:
    return MemoryItem(
        kind="knowledge", scope="global", task_group="ops", title="Deploy", text=text, keywords=("deploy", "falcon"),
        evidence=(), valid_from=None, consolidation_id=None, reason="the session says so",
    )


def test_sealed_paths_reach_nested_fields_and_list_elements() -> None:
    state = {"facts": {"first_user_message": "hello", "path": "/p"}, "transcript": [{"text": "a", "kind": "user"}, {"text": "", "kind": "user"}]}
    sealed = seal_state(json.loads(json.dumps(state)), ("facts.first_user_message", "transcript.*.text"), lambda b: {"c": b.decode()})
    assert sealed["facts"] == {"first_user_message": ERASED, "path": "/p"}
    assert [t["text"] for t in sealed["transcript"]] == [ERASED, ""]  # an empty text has nothing to hide
    assert json.loads(sealed[SEALED_KEY]["c"]) == ["hello", "a"]
    assert open_state(json.loads(json.dumps(sealed)), ("facts.first_user_message", "transcript.*.text"), lambda s: s["c"].encode()) == state
    gone = open_state(json.loads(json.dumps(sealed)), ("facts.first_user_message", "transcript.*.text"), lambda s: None)
    assert gone["facts"]["first_user_message"] == ERASED and SEALED_KEY not in gone


def test_opening_puts_every_text_back_where_sealing_took_it() -> None:
    """Sealing and opening walk the same slots, in the same order, on every shape."""
    import random

    from mnemolog.domain.memory_item import MemoryItem
    from mnemolog.domain.session import Session

    rng = random.Random(5)

    def value(depth: int) -> object:
        pick = rng.random()
        if depth > 2 or pick < 0.35:
            return rng.choice(["", "x", "a text", 3, None, ERASED + "?"])
        if pick < 0.7:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        return {k: value(depth + 1) for k in rng.sample(["text", "quote", "name", "command", "action", "1", "*"], rng.randrange(4))}

    path_sets = [MemoryItem.Added.sealed, MemoryItem.Rerecorded.sealed, Session.Recorded.sealed, Session.Rerecorded.sealed, ("0", "x.1", "*", "a.*.*")]
    for _ in range(3000):
        paths = rng.choice(path_sets)
        heads = {p.split(".")[0] for p in paths} | {"other", "*", "0"}
        state = {h: value(0) for h in heads if rng.random() < 0.8}
        for h in heads:
            if rng.random() < 0.2:
                state[h] = {p.split(".", 1)[-1].split(".")[0]: value(1) for p in paths if p.startswith(h + ".")}
        clear = json.loads(json.dumps(state))
        sealed = seal_state(json.loads(json.dumps(state)), paths, lambda b: {"c": b.decode()})
        assert open_state(sealed, paths, lambda s: s["c"].encode()) == clear


def test_an_items_text_is_never_stored_in_clear_and_reads_back(memory_store: Store) -> None:
    item = _item()
    memory_store.app.save_all(item)
    assert not any(b"falcon" in state for state in raw_event_states(memory_store))
    assert memory_store.app.repository.get(item.id).text == TEXT
    assert memory_store.reads().active_items()[0].text == TEXT


def test_destroyed_keys_leave_erased_text_and_ids_intact(memory_store: Store) -> None:
    session = Session(facts=facts("t1", first_user_message=TEXT), transcript=(TranscriptItem(kind=ItemKind.USER, text=TEXT),))
    memory_store.app.save_all(session)
    memory_store.keys.rotate(session.id)
    assert memory_store.keys.shred(session.id) == 1
    replayed: Session = memory_store.app.repository.get(session.id)
    assert replayed.facts.native_id == "t1" and replayed.facts.first_user_message == ERASED
    assert [i.text for i in replayed.transcript] == [ERASED] and replayed.transcript[0].kind is ItemKind.USER


def test_a_sealed_text_does_not_open_for_another_aggregate() -> None:
    keys = MemoryKeys()
    one, other = _item().id, _item().id
    sealed = keys.seal(one, b"secret")
    assert keys.open(one, sealed) == b"secret"
    assert keys.open(other, sealed) is None


@pytest.mark.parametrize("make", [lambda tmp: MemoryKeys(), lambda tmp: SqliteKeys(tmp / "keys.sqlite")])
def test_rotate_and_shred_keep_only_the_current_key(make, tmp_path: Path) -> None:
    keys = make(tmp_path)
    subject = _item().id
    old = keys.seal(subject, b"old text")
    keys.rotate(subject)
    new = keys.seal(subject, b"new text")
    assert old["k"] != new["k"]
    assert keys.shred(subject) == 1 and keys.shred(subject) == 0
    assert keys.open(subject, old) is None and keys.open(subject, new) == b"new text"
    keys.compact()
    keys.close()
    if isinstance(keys, SqliteKeys):
        reopened = SqliteKeys(tmp_path / "keys.sqlite")
        assert reopened.open(subject, new) == b"new text" and reopened.open(subject, old) is None
        reopened.close()


def _stored_both_ways(event: Any) -> tuple[dict[str, Any], list[str], dict[str, Any], list[str]]:
    """The stored JSON of ``event`` as the mapper writes it and as ``seal_state`` of its JSON form does, with each one's sealed texts."""
    keys = MemoryKeys()
    mapper = PydanticMapper(transcoder=JSONTranscoder())
    mapper.keys = keys
    fast = json.loads(mapper.to_stored_event(event).state)
    fast_sealed = fast.pop(SEALED_KEY, None)
    fast_texts = json.loads(keys.open(event.originator_id, fast_sealed) or b"[]") if fast_sealed else []
    recorded: list[bytes] = []
    slow = seal_state(event.model_dump(mode="json"), sealed_paths(type(event)), lambda b: recorded.append(b) or {"k": "", "c": ""})
    slow.pop(SEALED_KEY, None)
    return fast, fast_texts, slow, [t for b in recorded for t in json.loads(b)]


def _skill_item() -> MemoryItem:
    item = MemoryItem(
        kind="skill", scope="global", task_group="release", title="Cut a release", text="How to cut a release — «vite»",
        keywords=("release", "", "tag"), evidence=(uuid4(),), valid_from=None, consolidation_id=None, reason="seen twice",
        spans=(EvidenceSpan(session_id=uuid4(), line=3, item=1, quote="make release"), EvidenceSpan(session_id=uuid4(), line=None, item=2, quote="")),
        skill=Skill(name="cut-release", steps=(SkillStep(command="make tag", action=""), SkillStep(command="", action="push the tag \"v1\"\n")), relies_on=("make", "git")),
    )
    item.revise(title="Cut a release", text="[erased] then tag", keywords=(), evidence=(), valid_from=None, consolidation_id=None, reason="", spans=None, skill=None)
    return item


def test_the_mapper_stores_what_sealing_the_json_form_stores_for_every_kind_of_event(memory_store: Store) -> None:
    every_event(memory_store.app)
    events = [memory_store.app.mapper.to_domain_event(n) for n in memory_store.app.notifications()]
    events += _skill_item().collect_events()
    sealed_kinds = set()
    for event in events:
        if not sealed_paths(type(event)):
            continue
        fast, fast_texts, slow, slow_texts = _stored_both_ways(event)
        assert fast == slow, type(event).__qualname__
        assert fast_texts == slow_texts, type(event).__qualname__
        if slow_texts:
            sealed_kinds.add(type(event).__qualname__)
    assert {"MemoryItem.Added", "MemoryItem.Revised", "Session.Recorded"} <= sealed_kinds
    assert len(sealed_kinds) >= 10


def test_a_sealed_path_over_a_value_the_object_walk_cannot_read_falls_back_to_the_json_form() -> None:
    class Odd(EventSourced.Created):
        sealed: ClassVar[tuple[str, ...]] = ("refs.*", "note")
        refs: tuple[UUID, ...]  # their JSON form is strings: sealed there
        note: str

    event = Odd(originator_id=uuid4(), originator_version=1, timestamp=datetime.now(UTC), originator_topic="x", refs=(uuid4(),), note="n")
    assert seal_model(event, Odd.sealed, lambda b: {"k": "", "c": ""}) is None
    fast, fast_texts, slow, slow_texts = _stored_both_ways(event)
    assert fast == slow and fast_texts == slow_texts == [str(event.refs[0]), "n"]


def test_a_model_whose_json_is_not_its_fields_as_they_are_falls_back_to_the_json_form() -> None:
    class Renamed(EventSourced.Created):
        sealed: ClassVar[tuple[str, ...]] = ("note",)
        note: str = Field(serialization_alias="remark")

    class Dumped(EventSourced.Created):
        sealed: ClassVar[tuple[str, ...]] = ("note",)
        note: str

        @field_serializer("note")
        def _upper(self, value: str) -> str:
            return value.upper()

    common = {"originator_id": uuid4(), "originator_version": 1, "timestamp": datetime.now(UTC), "originator_topic": "x"}
    for event in (Renamed(**common, note="n"), Dumped(**common, note="n")):
        assert seal_model(event, type(event).sealed, lambda b: {"k": "", "c": ""}) is None
    plain = _skill_item().collect_events()[0]
    assert seal_model(plain, sealed_paths(type(plain)), lambda b: {"k": "", "c": ""}) is not None  # the fast path for our own events
