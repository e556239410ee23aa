"""The read path (context, search, show, memory files) on an in-memory store.

Items, reviews, citations and tombstones are written as aggregates straight to
the log; the reads go through the read port, as the CLI and the MCP server
call them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from uuid import UUID

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.citation import Citation
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services import read
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import fingerprint
from support.memory import extracted_session, item
from support.reading import memory_folder, search_ids, show

A = "git:example.com/acme/api"
B = "git:example.com/acme/billing"
DAY = datetime(2026, 10, 20, tzinfo=UTC)
INSTRUCTIONS = "# How to use memory"


class Words:
    """A tokenizer that counts whitespace-separated words."""

    def count(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, tokens: int) -> str:
        return " ".join(text.split()[: max(tokens, 0)])


def context(store: Store, project: str, budget: int = 2000) -> read.Context:
    return read.context(store.reads(), store.matcher(), Words(), INSTRUCTIONS, project, budget)


def listed(text: str) -> list[str]:
    return re.findall(r"\[item:([0-9a-f-]{36})\]", text)


def add(store: Store, scope: str, text: str, **fields: object) -> str:
    new = item(scope, text, **fields)  # type: ignore[arg-type,unused-ignore]
    store.app.save_all(new)
    return str(new.id)


def review(store: Store, item_id: str, trust: Trust) -> None:
    chosen = store.app.repository.get(UUID(item_id))
    chosen.review(trust, "dev")
    store.app.save_all(chosen)


def cite(store: Store, item_id: str, times: int) -> None:
    for _ in range(times):
        store.app.save_all(Citation(item_ids=(UUID(item_id),), session_ids=(), citing_session=None, cited_at=DAY, source="cli"))


def tombstone(store: Store, value: str, scope: str) -> None:
    """A tombstone alone (no forgetting around it), to test the read rule by itself."""
    digest, width = fingerprint(store.tombstone_key(), value)
    store.app.save_all(Tombstone(digest=digest, width=width, scope=scope, reason="test"))


# ------------------------------------------------------------------ context


def test_context_lists_accepted_first_then_most_used_then_newest_and_never_rejected(memory_store: Store) -> None:
    s = memory_store
    older = add(s, A, "Older advice.")
    newer = add(s, A, "Newer advice.")
    used_twice = add(s, A, "Cited twice.")
    used_five = add(s, "global", "Cited five times.", kind="preference")
    accepted = add(s, A, "Confirmed by the user.")
    doubted = add(s, A, "Maybe true.")
    rejected = add(s, A, "Wrong advice.")
    retired = add(s, A, "Old news.")
    theirs = add(s, B, "Billing advice.")
    review(s, accepted, Trust.ACCEPTED)
    review(s, doubted, Trust.DOUBTED)
    review(s, rejected, Trust.REJECTED)
    review(s, theirs, Trust.ACCEPTED)
    cite(s, used_twice, 2)
    cite(s, used_five, 5)
    cite(s, doubted, 9)
    cite(s, rejected, 9)
    gone = s.app.repository.get(UUID(retired))
    gone.retire("superseded")
    s.app.save_all(gone)

    shown = context(s, A)

    assert listed(shown.text) == [accepted, used_five, used_twice, newer, older, doubted]
    assert [str(i) for i in shown.item_ids] == listed(shown.text)
    assert shown.more == 0
    assert shown.text.startswith(INSTRUCTIONS + "\n")
    assert "Wrong advice" not in shown.text and "Billing" not in shown.text
    assert f"- [preference] Cited five times. (global, used 5x) [item:{used_five}]" in shown.text
    assert f"(api, doubted, used 9x) [item:{doubted}]" in shown.text


@pytest.mark.parametrize("budget", [0, 3, 20, 60, 150, 400, 5000])
def test_context_never_exceeds_its_budget_and_counts_what_it_leaves_out(memory_store: Store, budget: int) -> None:
    s = memory_store
    s.app.save_all(*[item(A, f"Advice number {n}: run the {n} checks before pushing.") for n in range(120)])

    shown = context(s, A, budget)

    assert shown.tokens == Words().count(shown.text) <= budget
    assert shown.budget == budget
    if shown.item_ids or shown.more:  # the head fits: every item is either shown or counted
        assert len(shown.item_ids) + shown.more == 120
    if shown.item_ids and shown.more:  # the closing line says how many more there are
        assert f"({shown.more} more items are not shown here" in shown.text
    if budget >= 400:
        assert shown.item_ids


def test_an_empty_memory_says_so(memory_store: Store) -> None:
    shown = context(memory_store, A)
    assert "Nothing is remembered for this project yet." in shown.text
    assert shown.item_ids == () and shown.more == 0


# ------------------------------------------------------------------ the one tombstone rule on every read


def test_a_project_tombstone_withholds_a_global_item_from_that_project_only(memory_store: Store) -> None:
    s = memory_store
    carrier = add(s, "global", "Deploy with the falcon blue key.", title="Deploy key", keywords=("deploy",))
    clean = add(s, "global", "Deploy with make deploy.", title="Deploy", keywords=("deploy",))
    tombstone(s, "falcon blue", A)

    # Project A reads nothing of it: context, search, show, every memory file.
    in_a = context(s, A)
    assert carrier not in in_a.text and "falcon" not in in_a.text and clean in in_a.text
    assert search_ids(s, "deploy", A) == [clean]
    assert show(s, carrier, A) is None
    assert all("falcon" not in text and carrier not in text for text in memory_folder(s, A).values())

    # Project B reads the global item: the tombstone is A's.
    in_b = context(s, B)
    assert carrier in in_b.text and "falcon blue" in in_b.text
    assert set(search_ids(s, "deploy", B)) == {carrier, clean}
    shown = show(s, carrier, B)
    assert shown is not None and shown.item.text == "Deploy with the falcon blue key."
    assert any(carrier in text for text in memory_folder(s, B).values())


def test_a_global_tombstone_withholds_from_every_project(memory_store: Store) -> None:
    s = memory_store
    carrier = add(s, "global", "Deploy with the falcon blue key.", keywords=("deploy",))
    ours = add(s, A, "The api deploys with the falcon blue key too.", keywords=("deploy",))
    tombstone(s, "falcon blue", "global")
    for project in (A, B):
        assert listed(context(s, project).text) == []
        assert search_ids(s, "deploy falcon", project) == []
        assert show(s, carrier, project) is None
    assert show(s, ours, A) is None


def test_a_tombstone_of_another_project_does_not_hide_an_item(memory_store: Store) -> None:
    s = memory_store
    ours = add(s, A, "Run make test-fast before pushing.")
    tombstone(s, "make test-fast", B)
    assert listed(context(s, A).text) == [ours]
    assert search_ids(s, "pushing", A) == [ours]
    assert show(s, ours, A) is not None


# ------------------------------------------------------------------ search


def test_search_keeps_its_limit_when_many_hits_are_withheld(memory_store: Store) -> None:
    s = memory_store
    # Short texts rank first: all 30 withheld items outrank the five readable ones.
    s.app.save_all(*[item(A, f"deploy falcon {n}") for n in range(30)])
    readable = [add(s, A, f"deploy the api with the staging script, variant {n} of the long ones") for n in range(5)]
    tombstone(s, "falcon", A)

    found = search_ids(s, "deploy", A, limit=5)

    assert sorted(found) == sorted(readable)


def test_search_filters_by_kind_and_refuses_an_unknown_one(memory_store: Store) -> None:
    s = memory_store
    tip = add(s, A, "Tests run with make test.", keywords=("tests",))
    pref = add(s, "global", "The user wants tests run before every commit.", kind="preference")
    assert set(search_ids(s, "tests", A)) == {tip, pref}
    assert search_ids(s, "tests", A, kind="preference") == [pref]
    with pytest.raises(ValueError, match="unknown kind"):
        search_ids(s, "tests", A, kind="nonsense")
    assert search_ids(s, "tests", A, limit=0) == []


def test_a_hit_as_json_names_the_item_not_its_evidence(memory_store: Store) -> None:
    s = memory_store
    theirs = extracted_session(s, "thread-b", B, "Billing session.", updated_at=DAY)
    add(s, "global", "The user wants tests run before pushing.", kind="preference", evidence=(theirs,))
    [hit] = read.search(s.reads(), s.matcher(), "tests", A)
    data = read.hit_dict(hit)
    assert {"id", "kind", "scope", "trust", "status", "valid_from", "valid_to", "use_count", "score"} <= data.keys()
    assert str(theirs) not in str(data)


# ------------------------------------------------------------------ show


def test_show_describes_the_projects_evidence_and_counts_the_rest(memory_store: Store) -> None:
    s = memory_store
    ours = extracted_session(s, "thread-a", A, "Made the api tests fast with the falcon blue key.", updated_at=DAY)
    theirs = extracted_session(s, "thread-b", B, "Billing session.", updated_at=DAY)
    shared = add(s, "global", "The user wants tests run before pushing.", kind="preference", evidence=(ours, theirs))
    tombstone(s, "falcon blue", "global")

    for reference in (shared, f"[item:{shared}]", f"item:{shared}", f"  {shared.upper()} "):
        shown = show(s, reference, A)
        assert shown is not None and str(shown.item.item_id) == shared, reference
    shown = show(s, shared, A)
    assert shown is not None
    assert [e.native_id for e in shown.evidence] == ["thread-a"] and shown.evidence_elsewhere == 1
    assert shown.evidence[0].rollout_summary == "Made the api tests fast with the [forgotten] key."
    data = shown.as_dict()
    assert data["evidence"][0]["summary"] == "Made the api tests fast with the [forgotten] key."
    assert data["evidence_in_other_projects"] == 1 and str(theirs) not in str(data)


def test_show_refuses_unknown_ids_and_other_projects_items_and_shows_any_status(memory_store: Store) -> None:
    s = memory_store
    theirs = add(s, B, "Billing deploys run terraform apply.")
    rejected = add(s, A, "Wrong advice.")
    retired = add(s, A, "Old advice.")
    review(s, rejected, Trust.REJECTED)
    gone = s.app.repository.get(UUID(retired))
    gone.retire("superseded")
    s.app.save_all(gone)

    assert show(s, "not-an-id", A) is None
    assert show(s, "00000000-0000-4000-8000-000000000000", A) is None
    assert show(s, theirs, A) is None
    assert show(s, theirs, B) is not None
    rejected_shown, retired_shown = show(s, rejected, A), show(s, retired, A)
    assert rejected_shown is not None and rejected_shown.item.trust == "rejected"
    assert retired_shown is not None and retired_shown.item.status == "retired"


# ------------------------------------------------------------------ memory files


def test_a_memory_file_whole_or_numbered_lines() -> None:
    files = {"MEMORY.md": "one\ntwo\nthree\n", "rollout_summaries/a.md": "x\n"}
    assert read.memory_file(files, "MEMORY.md") == "one\ntwo\nthree\n"
    assert read.memory_file(files, "./MEMORY.md", 2, 3) == "2: two\n3: three"
    assert read.memory_file(files, "MEMORY.md", 2) == "2: two\n3: three"
    assert read.memory_file(files, "MEMORY.md", 0, 99) == "1: one\n2: two\n3: three"
    assert read.memory_file(files, "rollout_summaries/a.md", None, 1) == "1: x"
    assert read.memory_file(files, "nope.md") is None
    assert read.folder_index(files) == ["MEMORY.md", "rollout_summaries/a.md"]


def test_the_memory_folder_of_a_project_holds_only_its_and_global_items(memory_store: Store) -> None:
    s = memory_store
    ours, shared, theirs = add(s, A, "Api advice."), add(s, "global", "Global advice."), add(s, B, "Billing advice.")
    text = "".join(memory_folder(s, A).values())
    assert ours in text and shared in text and theirs not in text


def test_the_counts_doctor_prints(memory_store: Store) -> None:
    s = memory_store
    retired = add(s, A, "Old advice.")
    add(s, "global", "Current advice.")
    gone = s.app.repository.get(UUID(retired))
    gone.retire("superseded")
    s.app.save_all(gone)
    extracted_session(s, "thread-a", A, "A session.", updated_at=DAY)
    tombstone(s, "falcon", A)
    counts = s.reads().counts()
    assert (counts.sessions, counts.items, counts.active_items, counts.tombstones) == (1, 2, 1, 1)
    assert (counts.consolidations, counts.notes) == (0, 0)
