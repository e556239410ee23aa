"""Sealed text: stored encrypted under a data key of its aggregate; once the key is destroyed it reads [erased]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemolog.adapters.bootstrap import Store
from mnemolog.adapters.data_keys import MemoryKeys, SqliteKeys
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.sealing import ERASED, SEALED_KEY, open_state, seal_state
from mnemolog.domain.session import Session
from mnemolog.domain.transcript import ItemKind, TranscriptItem
from support.raw_events import raw_event_states
from support.scenarios import facts

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
