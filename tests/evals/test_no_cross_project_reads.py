"""Guarantee 3: a read for project A never returns project B's memory.

Over every read: `context`, `search`, `show` (the read services and the CLI)
and every MCP tool, on both backends. Project B's items share words with A's
(so a missing scope filter would surface them), are accepted and heavily cited
(so they would rank first), and a global item has evidence in B (whose session
text must not appear either).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio
import pytest
from mcp.client import Client
from mnemolog.adapters.scope import scope_for_cwd
from mnemolog.adapters.store import Store
from mnemolog.cli.mcp_server import build_server
from mnemolog.domain.memory_item import Trust
from mnemolog.domain.services.cite import save_citation
from mnemolog.domain.services.read import KINDS, hit_dict, memory_file
from support.cli import run_cli
from support.memory import extracted_session, git_project, item, save
from support.reading import context_for, memory_folder, search, search_ids, show
from support.sessions import thread_id
from support.stores import FixedClock, StoreFactory

A = "git:github.com/acme/api"
B = "git:github.com/acme/billing"
SECRET_WORD = "bravozulu"  # only project B's texts hold it
DAY = datetime(2026, 10, 20, tzinfo=UTC)


def b_texts() -> list[tuple[str, str, str]]:
    return [
        ("knowledge", "Deploy tests", f"Run the deploy tests with make test-{SECRET_WORD} before pushing."),
        ("failure", "Flaky tests", f"The {SECRET_WORD} queue makes tests flaky; rerun once."),
        ("preference", "", f"In billing, always answer in {SECRET_WORD} style."),
        ("task", "Fix billing tests", f"Fixed the failing invoice tests ({SECRET_WORD})."),
        ("skill", "Release", f"Release billing with the {SECRET_WORD} script."),
    ]


@pytest.fixture
def world(store_factory: StoreFactory, tmp_path: Path) -> dict[str, Any]:
    store = store_factory(clock=FixedClock(datetime(2026, 11, 1, tzinfo=UTC)))
    a_session = extracted_session(store, thread_id(1), A, "Made the api tests fast.", updated_at=DAY)
    b_session = extracted_session(store, thread_id(2), B, f"Billing session about {SECRET_WORD} deploys.", updated_at=DAY)
    a_ids = save(
        store,
        item(A, "Run make test-fast before pushing.", title="Fast tests", keywords=("tests", "deploy"), evidence=(a_session,)),
        item(A, "Deploy the api with make deploy.", kind="task", title="Deploy api", evidence=(a_session,)),
    )
    b_ids = save(
        store,
        *[
            item(B, text, kind=kind, title=title, keywords=("tests", "deploy", SECRET_WORD), trust=Trust.ACCEPTED, evidence=(b_session,))
            for kind, title, text in b_texts()
        ],
    )
    g_ids = save(store, item("global", "The user wants tests run before pushing.", kind="preference", evidence=(a_session, b_session)))
    for _ in range(3):
        save_citation(store, item_ids=[UUID(i) for i in b_ids], session_ids=[b_session], cited_at=DAY, source="cli")
    store.catch_up()
    api = git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git")
    assert scope_for_cwd(api) == A
    forbidden = [*b_ids, str(b_session), thread_id(2), SECRET_WORD]
    return {"store": store, "a": a_ids, "b": b_ids, "g": g_ids, "api": api, "forbidden": forbidden, "tmp": tmp_path}


def leaks(text: str, world: dict[str, Any]) -> list[str]:
    return [f for f in world["forbidden"] if f.lower() in text.lower()]


def queries() -> list[str]:
    words = {w for _, title, text in b_texts() for w in re.findall(r"\w+", f"{title} {text}")}
    return [SECRET_WORD, "tests deploy", "billing", " ".join(sorted(words)), *sorted(words)]


def test_context_search_and_show_never_return_another_projects_items(world: dict[str, Any]) -> None:
    store: Store = world["store"]
    context = context_for(store, A)
    assert leaks(context.text, world) == []
    assert {str(i) for i in context.item_ids} == {*world["a"], *world["g"]}

    for query in queries():
        for kind in (None, *KINDS):
            hits = search(store, query, A, kind, limit=50)
            assert all(h.item.scope in (A, "global") for h in hits), (query, kind)
            assert leaks(json.dumps([hit_dict(h) for h in hits]), world) == [], (query, kind)
    assert set(search_ids(store, "tests", A, limit=50)) == {world["a"][0], world["g"][0]}

    for b_id in world["b"]:
        assert show(store, b_id, A) is None
    shown = show(store, world["g"][0], A)
    assert shown is not None
    assert leaks(json.dumps(shown.as_dict()), world) == []
    assert [e.native_id for e in shown.evidence] == [thread_id(1)] and shown.evidence_elsewhere == 1
    assert show(store, world["b"][0], B) is not None  # B itself still reads its own

    files = memory_folder(store, A)
    for path in files:
        assert leaks(memory_file(files, path) or "", world) == [], path


def test_every_mcp_tool_answers_for_its_own_project_only(world: dict[str, Any]) -> None:
    store: Store = world["store"]
    server, _ = build_server(lambda: store, str(world["api"]))
    answers: list[str] = []

    async def session() -> None:
        async with Client(server) as client:
            async def call(name: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(name, args)
                answers.append(" ".join(getattr(c, "text", "") for c in result.content))
                return result

            await call("get_memory_context", {})
            for query in queries()[:8]:
                for kind in (None, "task", "preference"):
                    await call("search_memory", {"query": query, "kind": kind, "limit": 50})
            for b_id in world["b"]:
                refused = await call("read_memory_item", {"item_id": b_id})
                assert refused.is_error
                answers[-1] = answers[-1].replace(b_id, "<the id asked for>")  # the error names what was asked, nothing more
            await call("read_memory_item", {"item_id": world["g"][0]})
            for path in memory_folder(store, A):
                await call("read_memory_file", {"path": path})
            assert (await call("read_memory_file", {"path": "rollout_summaries/nope.md"})).is_error
            await call("add_memory_note", {"text": "Remember the api runs on port 8080."})
            await call("cite_memory", {"text": f"[item:{world['a'][0]}]"})

    anyio.run(session)
    assert len(answers) > 30
    for answer in answers:
        assert leaks(answer, world) == [], answer[:300]


def test_the_cli_reads_for_the_working_folder_only(world: dict[str, Any], database_url: str | None) -> None:
    env = {"MNEMOLOG_HOME": str(world["tmp"] / "home")}
    if database_url:
        env["MNEMOLOG_DATABASE_URL"] = database_url
    cwd = str(world["api"])
    context = run_cli("context", "--cwd", cwd, env=env)
    search = run_cli("search", " ".join(queries()[:4]), "--cwd", cwd, "--limit", "200", env=env)
    show = run_cli("show", world["b"][0], "--cwd", cwd, env=env)
    assert context.code == 0 and world["a"][0] in context.out, context.err
    assert search.code == 0 and world["a"][0] in search.out, search.err
    assert show.code == 5
    assert leaks(context.out + context.err + search.out + search.err, world) == []
    assert leaks(show.out + show.err.replace(world["b"][0], "<the id asked for>"), world) == []
