"""History excerpts on both backends: searchable per project, scrubbed by forget, put back by lift, gone with a deleted session."""

from __future__ import annotations

from pathlib import Path

from mnemolog.adapters.store import Store
from mnemolog.domain.services.forget import forget_value, lift
from mnemolog.domain.services.recall import read_excerpt, recall
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import StoreFactory

API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"
DECISION = "ok let's cap the csv export at 5000 rows, the reporting db chokes above that"


def _record(store: Store, folder: Path) -> None:
    paths = [
        write_rollout(folder, thread_id(1), DECISION, commands=(("pytest tests/test_export.py", "3 passed", 0),)),
        write_rollout(folder, thread_id(2), "rename the invoice module to billing", when="2026-10-21T10:00:00.000Z"),
        write_rollout(
            folder, thread_id(3), "the web app needs dark mode, export the theme tokens",
            cwd="/home/dev/acme/web", remote="git@github.com:acme/web.git", when="2026-10-22T10:00:00.000Z",
        ),
    ]
    ingest_files(store, paths)


def _history(store: Store, query: str, project: str = API) -> list[str]:
    found = recall(store.reads(), store.recall(), store.matcher(), query, project, only="history")
    return [hit.excerpt.text for hit in found.hits if hit.excerpt is not None]


def test_an_excerpt_is_found_by_its_words_and_says_where_it_comes_from(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _record(store, tmp_path / "sessions")

    found = recall(store.reads(), store.recall(), store.matcher(), "how many rows may the export hold", API)

    assert found.hits, "the decision made in the chat should be found in the history"
    hit = found.hits[0]
    assert hit.kind == "excerpt" and hit.excerpt is not None
    assert "5000 rows" in hit.excerpt.text and "ran: bash -lc pytest tests/test_export.py" in hit.excerpt.text
    assert hit.excerpt.agent == "codex" and hit.excerpt.native_id == thread_id(1)
    assert hit.excerpt.first_line is not None and hit.excerpt.last_line is not None
    assert hit.excerpt.reference() == f"history:{thread_id(1)}:0"
    shown = read_excerpt(store.recall(), store.matcher(), hit.excerpt.reference(), API)
    assert shown is not None and [e.n for e in shown] == [0]


def test_excerpts_of_one_project_never_reach_another(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _record(store, tmp_path / "sessions")

    assert _history(store, "export rows", API)
    assert not any("5000" in text for text in _history(store, "export rows cap", WEB))
    assert any("theme tokens" in text for text in _history(store, "export theme tokens", WEB))
    assert read_excerpt(store.recall(), store.matcher(), f"history:{thread_id(1)}:0", WEB) is None


def test_forget_scrubs_the_value_from_every_excerpt_and_lift_puts_it_back(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _record(store, tmp_path / "sessions")
    assert any("5000 rows" in text for text in _history(store, "csv export cap"))

    report = forget_value(store, "5000 rows", "global")

    for query in ("csv export cap", "5000 rows", "5000", "reporting db chokes"):
        assert not any("5000 rows" in text.casefold() for text in _history(store, query)), query
    stored = [e.text for e in store.recall().session_excerpts(thread_id(1), API, 0, 10)]
    assert stored and not any("5000 rows" in text for text in stored), "the views keep no excerpt holding the value"

    lift(store, report.tombstone_id, "a test")
    assert any("5000 rows" in text for text in _history(store, "csv export cap"))


def test_a_spelling_the_matcher_folds_to_the_value_is_withheld_too(store_factory: StoreFactory, tmp_path: Path) -> None:
    store = store_factory()
    _record(store, tmp_path / "sessions")

    forget_value(store, "5000 ROWS", "global")

    assert not any("5000 rows" in text.casefold() for text in _history(store, "csv export cap"))
