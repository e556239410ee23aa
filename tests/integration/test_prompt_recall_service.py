"""Prompt-time recall on both backends: what bears on a prompt, once per session, within its budget, recorded as served."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.store import Store
from mnemolog.domain.services.injections import (
    served_context,
    served_prompt_recall,
    session_history,
)
from support.memory import item, save
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import StoreFactory

API = "git:github.com/acme/api"
DECISION = "ok let's cap the csv export at 5000 rows per file, the reporting database chokes above that"
ASKED = "the csv export of the reporting database stops at 5000 rows, why is the file cut?"


def _world(store: Store, folder: Path) -> None:
    ingest_files(store, [
        write_rollout(folder, thread_id(1), DECISION, commands=(("pytest tests/test_export.py", "3 passed", 0),)),
        write_rollout(folder, thread_id(2), "rename the invoice module to billing", when="2026-10-21T10:00:00.000Z"),
    ])


def _prompt(store: Store, prompt: str, session: str, budget: int = 300):
    return served_prompt_recall(store, store.recall(), store.ports.tokenizer, prompt, API, session=session, budget=budget)


def test_a_prompt_about_a_past_decision_gets_it_once_per_session_and_it_is_recorded(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _world(store, tmp_path / "sessions")

    first = _prompt(store, ASKED, "s-1")
    assert "5000 rows" in first.text and f"history:{thread_id(1)}:0" in first.text
    assert 0 < first.tokens <= 300

    again = _prompt(store, ASKED + " please check", "s-1")
    assert again.text == "" and again.already_given >= 1, "what the session was given is not given twice"
    assert "5000 rows" in _prompt(store, ASKED, "s-2").text, "another session gets it"

    told = session_history(store.reads(), store.matcher(), "s-1").as_dict()
    assert [s["surface"] for s in told["servings"]] == ["hook:prompt", "hook:prompt"]
    # (one clock moment: the two servings' order is the log's, not the test's)
    assert sorted((s["excerpts"], s["tokens"] > 0) for s in told["servings"]) == [([], False), ([f"history:{thread_id(1)}:0"], True)]


def test_a_prompt_about_nothing_remembered_gets_nothing_but_is_recorded_as_asked(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _world(store, tmp_path / "sessions")

    for prompt in ("fix the typo in the README", "can you add a --verbose flag", "what does this error mean: KeyError: 'user'"):
        found = _prompt(store, prompt, "s-1")
        assert found.text == "" and found.hits == () and found.tokens == 0, prompt
    servings = session_history(store.reads(), store.matcher(), "s-1").as_dict()["servings"]
    assert len(servings) == 3 and all(s["items"] == [] and s["excerpts"] == [] for s in servings)


def test_an_item_served_at_the_start_of_the_session_is_not_served_again_with_a_prompt(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    (saved,) = save(store, item(API, "The csv export of the reporting database is capped at 5000 rows per file.", title="CSV export rows cap"))

    fresh = _prompt(store, ASKED, "other")
    assert f"[item:{saved}]" in fresh.text, "the item bears on the prompt"
    served_context(store, store.ports.tokenizer, "", API, 3000, session="s-1", surface="hook")
    given = _prompt(store, ASKED, "s-1")
    assert f"[item:{saved}]" not in given.text and given.already_given == 1


def test_what_a_prompt_gets_stays_within_its_budget(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _world(store, tmp_path / "sessions")
    count = store.ports.tokenizer.count

    small = _prompt(store, ASKED, "s-1", budget=90)
    assert small.text and small.tokens <= 90
    from mnemolog.domain import served_memory

    assert count(served_memory.wrap(small.text)) == small.tokens
    assert _prompt(store, ASKED, "s-2", budget=30).text == "", "no room for a useful part of any hit"
