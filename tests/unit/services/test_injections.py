"""The injection log on a store in memory: what each read served, why, and what a session's history says."""

from __future__ import annotations

import pytest
from mnemolog.adapters.store import Store
from mnemolog.adapters.tokens import TOKENIZER
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services.cite import record_citation
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.injections import (
    record_kept,
    record_served,
    served_context,
    served_search,
    session_history,
    why,
)
from support.memory import item, save

API = "git:example.com/acme/api"


def test_a_context_is_recorded_with_ranks_reasons_and_tokens(memory_store: Store) -> None:
    store = memory_store
    pref, fact = save(
        store,
        item("global", "The user prefers short answers.", kind="preference", trust=Trust.ACCEPTED),
        item(API, "Run make test-fast before pushing.", title="Fast tests"),
    )
    context = served_context(store, TOKENIZER, "# Memory", API, 2000, session="s-1", surface="hook")
    told = session_history(store.reads(), store.matcher(), "s-1").as_dict()
    [serving] = told["servings"]
    assert serving["surface"] == "hook" and serving["project"] == API and serving["tokens"] == context.tokens
    assert [(i["item_id"], i["rank"], i["trust"]) for i in serving["items"]] == [(pref, 1, "accepted"), (fact, 2, "proposed")]
    assert serving["items"][1]["title"] == "Fast tests" and not serving["items"][1]["cited"]
    assert session_history(store.reads(), store.matcher(), "someone else").servings == ()


def test_search_hits_carry_their_scores_and_citations_tell_cited_from_served(memory_store: Store) -> None:
    store = memory_store
    (fact,) = save(store, item(API, "Run make test-fast before pushing.", title="Fast tests", keywords=("tests",)))
    hits = served_search(store, TOKENIZER, "tests", API, None, 5, session="s-2", surface="mcp:search_memory")
    assert [str(h.item.item_id) for h in hits] == [fact]
    record_citation(store, f"used [item:{fact}]", "mcp", citing_session="s-2")
    told = session_history(store.reads(), store.matcher(), "s-2").as_dict()
    served = told["servings"][0]["items"][0]
    assert served["score"] == hits[0].score and served["why"].startswith("matched the query")
    assert told["cited"] == [fact] and served["cited"]
    row = store.reads().item(hits[0].item.item_id, API)
    assert row is not None and row.served_count == 1 and row.use_count == 1


def test_a_forgotten_items_title_is_not_shown_in_the_history(memory_store: Store) -> None:
    store = memory_store
    save(store, item(API, "Deploy with blue-falcon-42 on staging.", title="Deploy blue-falcon-42"))
    served_context(store, TOKENIZER, "# Memory", API, 2000, session="s-3", surface="context")
    forget_value(store, "blue-falcon-42", "global")
    told = session_history(store.reads(), store.matcher(), "s-3").as_dict()
    assert told["servings"][0]["items"][0]["title"] is None
    assert "falcon" not in repr(told)


def test_a_store_that_will_not_take_the_record_still_serves(memory_store: Store, monkeypatch) -> None:
    def refuse(*aggregates: object) -> None:
        raise OSError("database is locked")

    monkeypatch.setattr(memory_store.app, "save_all", refuse)
    assert record_served(memory_store, session="s", project=API, surface="hook", items=[], tokens=3) is None
    context = served_context(memory_store, TOKENIZER, "# Memory", API, 500, session="s", surface="hook")
    assert context.text.startswith("# Memory")


def test_why_names_trust_citations_and_recency() -> None:
    from datetime import UTC, datetime
    from uuid import uuid4

    from mnemolog.domain.reads import ItemRow

    row = ItemRow(item_id=uuid4(), kind="knowledge", scope=API, task_group="", title="", text="x", keywords=(), evidence=())
    assert why(row) == "proposed; never cited"
    assert why(row, 1.5) == "matched the query (score 1.5); proposed; never cited"
    cited = ItemRow(item_id=uuid4(), kind="knowledge", scope=API, task_group="", title="", text="x", keywords=(), evidence=(),
                    trust="accepted", use_count=3, updated_at=datetime(2026, 11, 1, tzinfo=UTC))
    assert why(cited) == "accepted; cited 3x; updated 2026-11-01"


def test_a_serving_the_log_would_not_take_is_kept_and_recorded_once(memory_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    store = memory_store
    (fact,) = save(store, item(API, "Run make test-fast before pushing.", title="Fast tests"))

    def busy(*aggregates: object) -> int:
        raise OSError("database is locked")

    with monkeypatch.context() as patched:
        patched.setattr(store.app, "save_all", busy)
        context = served_context(store, TOKENIZER, "# Memory", API, 2000, session="s-9", surface="hook")
    assert "make test-fast" in context.text  # the read stands
    assert session_history(store.reads(), store.matcher(), "s-9").servings == ()
    [(_, record)] = store.kept_served()

    assert record_kept(store) == 1
    [serving] = session_history(store.reads(), store.matcher(), "s-9").as_dict()["servings"]
    assert serving["surface"] == "hook" and [i["item_id"] for i in serving["items"]] == [fact]
    assert store.kept_served() == []
    store.keep_served(record)  # recorded, then kept again (a crash before it was forgotten)
    assert record_kept(store) == 0
    assert len(session_history(store.reads(), store.matcher(), "s-9").servings) == 1
    assert store.kept_served() == []
