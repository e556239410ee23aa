"""Negative evals: once forgotten, a value never reaches what an agent reads, whatever the models do.

For each way of forgetting, scripted models keep re-adding the value in later
extractions and consolidations; the value must stay out of the rendered folder
(summary, MEMORY.md, raw memories, rollout summaries), context, search, item
answers (what the MCP server serves) and every projection table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemolog.adapters.redaction import SecretRedactor
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.services import forget as forgetting
from mnemolog.domain.services import retention
from mnemolog.domain.services.notes import add_note
from mnemolog.domain.services.read import hit_dict, memory_file
from mnemolog.projections.log_reader import log_events
from support.forgetting import (
    ALL,
    API,
    SECRET,
    SENTENCE,
    Scenario,
    everything_an_agent_reads,
    start,
)
from support.reading import context_for, memory_folder, search, show
from support.session_pipeline import ingest_files
from support.stores import FixedClock

WAYS = ("value", "session", "pollution", "pruning", "reset", "item")


def forget_by(way: str, sc: Scenario, clock: FixedClock) -> None:
    store = sc.store
    if way == "value":
        forgetting.forget_value(store, SECRET, "global")
    elif way == "session":
        forgetting.forget_session(store, sc.source)
    elif way == "pollution":
        # The session goes on and uses web search: with external context disabled, it is polluted.
        path = next(sc.folder.glob(f"*{sc.threads[0]}.jsonl"))
        line = {"timestamp": "2026-10-20T11:00:00.000Z", "type": "response_item",
                "payload": {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "staging docs"}}}
        path.write_text(path.read_text() + json.dumps(line) + "\n")
        report = ingest_files(store, [sc.folder], ALL)
        assert report.polluted >= 1
    elif way == "pruning":
        clock.past_the_saves(days=60)  # 60 days after the import too (the window counts from it)
        result = retention.prune(store)
        assert sc.source in result.sessions
    elif way == "reset":
        retention.reset(store)
    elif way == "item":
        forgetting.forget_item(store, sc.value_items()[0])
    else:  # pragma: no cover
        raise AssertionError(way)


def later_rounds(way: str, sc: Scenario) -> None:
    """The models keep bringing the value back; a tombstone also faces new text that carries it."""
    if way in ("value", "item"):
        sc.adversarial = True  # the extractor writes the value into every new extraction
        path = next(sc.folder.glob(f"*{sc.threads[0]}.jsonl"))
        line = {"timestamp": "2026-10-20T12:00:00.000Z", "type": "event_msg",
                "payload": {"type": "user_message", "message": f"Again: {SENTENCE}."}}
        path.write_text(path.read_text() + json.dumps(line) + "\n")
    sc.write(3, "Add the import endpoint.", "2026-10-22T10:00:00.000Z")
    sc.round()
    sc.write(4, "Add the audit endpoint.", "2026-10-23T10:00:00.000Z")
    sc.round()


def assert_absent(sc: Scenario) -> None:
    store = sc.store
    store.catch_up()
    for where, text in everything_an_agent_reads(store).items():
        assert SECRET not in text, f"the forgotten value is in {where}"
        assert "falcon" not in text.lower(), f"part of the forgotten value is in {where}"
    context = context_for(store, API)
    assert "falcon" not in context.text.lower()
    for query in ("falcon", "deploy staging", "blue", "staging"):
        hits = search(store, query, API)
        assert "falcon" not in json.dumps([hit_dict(h) for h in hits]).lower()
    item_ids = {str(e.originator_id) for _, e in log_events(store.app) if isinstance(e, MemoryItem.Added)}
    for item_id in item_ids:
        shown = show(store, item_id, API)
        if shown is not None:
            assert "falcon" not in json.dumps(shown.as_dict(), default=str).lower()
    files = memory_folder(store, API)
    for name in files:
        assert "falcon" not in (memory_file(files, name) or "").lower()


@pytest.mark.parametrize("way", WAYS)
def test_a_forgotten_value_stays_forgotten(way: str, store_factory, tmp_path: Path) -> None:
    clock = FixedClock()
    store = store_factory(clock=clock, disable_on_external_context=True)
    sc = start(store, tmp_path)
    before = everything_an_agent_reads(store)
    assert SECRET in before["folder/MEMORY.md"] and SECRET in before["folder/raw_memories.md"]

    forget_by(way, sc, clock)
    assert not sc.value_items(), "forgetting retires the items that carry the value"
    assert_absent(sc)

    later_rounds(way, sc)
    assert not sc.value_items()
    assert any(SECRET in r.plan.edits[0].text for r in sc.consolidations_seen), "the model kept re-adding the value"
    assert_absent(sc)

    store.rebuild()  # a rebuilt view is as clean as the incremental one
    assert_absent(sc)


def test_forgetting_a_value_also_cleans_notes_and_past_profiles(store_factory, tmp_path: Path) -> None:
    """A user's own note and a model-written user profile that carry the value are scrubbed too."""
    store = store_factory(clock=FixedClock())
    sc = start(store, tmp_path, profile=f"Deploys often; {SENTENCE}.")
    add_note(store, f"Remember: {SENTENCE} on Fridays", "remember", "global", SecretRedactor())
    sc.round()  # the note is applied; the profile is written again
    store.catch_up()
    tables = json.dumps(reading_tables(store))
    assert SECRET in tables

    forgetting.forget_value(store, SECRET, "global")
    sc.profile = f"Still deploys often; {SENTENCE}."  # the model keeps putting it back
    sc.round()

    assert_absent(sc)
    assert SECRET not in json.dumps(reading_tables(store))


def reading_tables(store) -> dict:

    dump = store.reads().dump()
    return {"notes": dump["notes"], "consolidations": dump["consolidations"]}


def test_mcp_answers_over_stdio_never_carry_a_forgotten_value(store_factory, tmp_path: Path) -> None:
    """The same check through the real MCP server, as an agent would ask it."""
    import os
    import sys

    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters
    from support.memory import git_project

    store = store_factory(clock=FixedClock())
    sc = start(store, tmp_path)
    forgetting.forget_value(store, SECRET, "global")
    sc.adversarial = True
    sc.round()
    item_ids = sorted({str(e.originator_id) for _, e in log_events(store.app) if isinstance(e, MemoryItem.Added)})
    project = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    env = {**os.environ, "MNEMOLOG_HOME": str(store.settings.home)}
    if store.settings.database_url is not None:
        env["MNEMOLOG_DATABASE_URL"] = store.settings.database_url.get_secret_value()
    server = StdioServerParameters(command=str(Path(sys.executable).parent / "mnemolog"), args=["mcp", "--cwd", str(project)], env=env)
    answers: list[str] = []

    async def ask() -> None:
        async with Client(server, mode="legacy") as client:
            calls = [("get_memory_context", {}), *(("search_memory", {"query": q}) for q in ("falcon", "deploy staging", "blue"))]
            calls += [("read_memory_file", {"path": p}) for p in ("memory_summary.md", "MEMORY.md", "raw_memories.md")]
            calls += [("read_memory_item", {"item_id": i}) for i in item_ids]
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                answers.append(json.dumps([getattr(c, "text", "") for c in result.content]))

    anyio.run(ask)
    assert len(answers) >= 7 + len(item_ids)
    assert any("CSV" in a for a in answers), "the server answered with real memory"
    assert not [a for a in answers if "falcon" in a.lower()]
