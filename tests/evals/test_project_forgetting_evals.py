"""Negative evals for project-scoped forgetting: ``forget VALUE --project P`` holds for every read of P.

After the forget, a scripted model stores VALUE as a *global* item (with valid
evidence, so code lets it in: a global item is read by every project and only
global tombstones keep it out of the store), then tries to add it to P (code
rejects that plan). VALUE must never reach what P reads: ``render --project
P``, ``context``, ``search``, ``show`` and every MCP tool answer for P. Another
project Q still reads the global item, and its own items are left alone; a
global tombstone reaches every project. On SQLite and PostgreSQL, through the
CLI (in process) and the MCP server as an agent would ask them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio
from mcp.client import Client
from mnemolog.adapters.scope import scope_for_cwd
from mnemolog.adapters.store import Store
from mnemolog.cli.mcp_server import build_server
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import session_id_for
from mnemolog.projections.log_reader import log_events
from support.cli import run_cli
from support.consolidating import run_consolidation
from support.forgetting import ALL, SECRET, SENTENCE, clean_memory, value_memory
from support.memory import git_project
from support.reading import memory_folder
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout
from support.stores import FixedClock, StoreFactory

P = "git:github.com/acme/api"  # the project the value is forgotten in
Q = "git:github.com/acme/web"  # another project
QUERIES = ("falcon", "deploy staging", "blue", "staging", SECRET)


def session(n: int) -> UUID:
    return session_id_for("codex", thread_id(n))


def value_edit(scope: str, *evidence: UUID, kind: str = "knowledge") -> Edit:
    """An edit that carries the value in every text a model can write."""
    return Edit(op="add", kind=kind, scope=scope, task_group="deploy", title=f"Deploy with {SECRET}", text=f"{SENTENCE}.",
                keywords=("deploy", SECRET), evidence=tuple(str(e) for e in evidence), reason="the sessions say so")


@dataclass
class Model:
    """A consolidator whose next plan the test chooses (``stage``); every plan's user profile carries the value."""

    stage: str = "seed"
    answers: list[ConsolidationPlan] = field(default_factory=list)

    def plan(self, request: Any) -> ConsolidationPlan:
        if self.stage == "seed":  # P and Q each learn the value; P also learns something clean
            edits = [
                value_edit(P, session(1)),
                value_edit(Q, session(3)),
                Edit(op="add", kind="knowledge", scope=P, task_group="api", title="CSV export",
                     text="Endpoints stream CSV in chunks.", keywords=("csv",), evidence=(str(session(2)),), reason="reusable"),
            ]
        elif self.stage == "global":  # evidence from two projects: a valid global item
            edits = [value_edit("global", session(2), session(3))]
        elif self.stage == "project":  # straight back into P
            edits = [value_edit(P, session(2))]
        else:  # pragma: no cover
            raise AssertionError(self.stage)
        plan = ConsolidationPlan(edits=tuple(edits), user_profile=f"Deploys often; {SENTENCE}.")
        self.answers.append(plan)
        return plan


@dataclass
class World:
    """One store with sessions in P (S1 carries the value, S2 is clean) and in Q (S3 carries it)."""

    store: Store
    folder: Path
    tmp: Path
    env: dict[str, str]
    p_folder: Path  # a work tree of P, where an agent starts the MCP server
    model: Model = field(default_factory=Model)

    def round(self, stage: str) -> Any:
        """Ingest, extract, consolidate once with the model at ``stage``."""
        self.model.stage = stage
        ingest_files(self.store, [self.folder], ALL)
        extract_all(self.store, ScriptedExtractor(default=extraction), ALL)
        return run_consolidation(self.store, ScriptedConsolidator(default=self.model.plan), all_sessions=True)

    def cli(self, *args: str) -> tuple[int, str]:
        """Run ``mnemolog ARGS`` in process on this store; its exit code and everything it printed."""
        result = run_cli(*args, env=self.env)
        self.store.catch_up()  # the command wrote through its own store; this one reads the views after it
        return result.code, result.out + result.err

    def active(self, scope: str) -> list[Any]:
        return [i for i in self.store.reads().active_items() if i.scope == scope and SECRET in i.text]

    def item_ids(self) -> list[str]:
        return sorted({str(e.originator_id) for _, e in log_events(self.store.app) if isinstance(e, MemoryItem.Added)})


def extraction(transcript: Any) -> Any:
    text = " ".join(i.text for i in transcript.items)
    return value_memory() if SECRET in text else clean_memory(int(transcript.meta.native_id.rsplit("-", 1)[1], 16))


def make_world(store_factory: StoreFactory, database_url: str | None, tmp_path: Path) -> World:
    """The value in memory in P and in Q (one consolidation)."""
    store = store_factory(clock=FixedClock())
    env = {"MNEMOLOG_HOME": str(store.settings.home)}
    if database_url:
        env["MNEMOLOG_DATABASE_URL"] = database_url
    folder = tmp_path / "sessions"
    web = {"cwd": "/home/dev/acme/web", "remote": "git@github.com:acme/web.git"}
    write_rollout(folder, thread_id(1), f"{SENTENCE}, please. Then run make test.", when="2026-10-20T10:00:00.000Z")
    write_rollout(folder, thread_id(2), "Add the export endpoint.", when="2026-10-21T10:00:00.000Z")
    write_rollout(folder, thread_id(3), f"{SENTENCE} for the web app too.", when="2026-10-22T10:00:00.000Z", **web)
    world = World(store, folder, tmp_path, env, git_project(tmp_path / "work" / "api", "git@github.com:acme/api.git"))
    seeded = world.round("seed")
    assert seeded.status == "completed", seeded.detail
    assert world.active(P) and world.active(Q), "the value is in both projects' memory before the forget"
    return world


def forget_in(world: World, *scope: str) -> dict[str, Any]:
    code, out = world.cli("forget", SECRET, *scope, "--json")
    assert code == 0, out
    assert "falcon" not in out.lower()
    data: dict[str, Any] = json.loads(out)
    return data


def rendered(world: World, project: str | None, name: str) -> dict[str, str]:
    out = world.tmp / "rendered" / name
    code, printed = world.cli("render", "--out", str(out), *(("--project", project) if project else ()))
    assert code == 0, printed
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def mcp_answers(world: World, project_folder: Path) -> list[tuple[str, str]]:
    """Every MCP tool that reads, asked by an agent working in ``project_folder``: (the call, its answer as text)."""
    server, _ = build_server(lambda: world.store, str(project_folder))
    project = scope_for_cwd(project_folder)
    answers: list[tuple[str, str]] = []

    async def ask() -> None:
        async with Client(server) as client:
            calls: list[tuple[str, dict[str, Any]]] = [("get_memory_context", {})]
            calls += [("search_memory", {"query": q, "limit": 50}) for q in QUERIES]
            calls += [("read_memory_item", {"item_id": i}) for i in world.item_ids()]
            calls += [("read_memory_file", {"path": p}) for p in sorted(memory_folder(world.store, project))]
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                answers.append((f"{name} {arguments}", " ".join(getattr(c, "text", "") for c in result.content)))

    anyio.run(ask)
    return answers


def assert_withheld_from_p(world: World) -> None:
    """Nothing P reads carries the value: the folder, context, search, show, every MCP tool."""
    for name, text in rendered(world, P, "p").items():
        assert "falcon" not in text.lower(), f"render --project P: {name}"
    code, context = world.cli("context", "--project", P)
    assert code == 0 and "CSV" in context, context
    assert "falcon" not in context.lower()
    for query in QUERIES:
        code, found = world.cli("search", query, "--project", P, "--json", "--limit", "50")
        assert code == 0, found
        assert "falcon" not in json.dumps(json.loads(found)["hits"]).lower(), f"search {query!r}"  # the query is echoed
    answered = 0
    for item_id in world.item_ids():
        code, shown = world.cli("show", item_id, "--project", P, "--json")
        assert "falcon" not in shown.lower(), f"show {item_id}"
        answered += code == 0
    assert answered, "show answered for P's own items"
    answers = mcp_answers(world, world.p_folder)
    assert any(call.startswith("read_memory_file") for call, _ in answers) and any("CSV" in a for _, a in answers)
    for call, answer in answers:
        assert "falcon" not in answer.lower(), f"MCP {call}: {answer[:300]}"


def q_reads(world: World) -> tuple[str, str, dict[str, str]]:
    """What Q reads: its context, a search for the value, its rendered folder."""
    code, context = world.cli("context", "--project", Q)
    assert code == 0, context
    code, found = world.cli("search", "falcon", "--project", Q, "--json")
    assert code == 0, found
    return context, found, rendered(world, Q, "q")


def test_a_project_tombstone_withholds_a_global_item_from_that_project(
    store_factory: StoreFactory, database_url: str | None, tmp_path: Path
) -> None:
    world = make_world(store_factory, database_url, tmp_path)

    forgot = forget_in(world, "--project", P)
    assert forgot["scope"] == P and forgot["retired"] and not world.active(P)
    assert_withheld_from_p(world)

    stored = world.round("global")  # the model brings the value back as a global item, with valid evidence
    assert stored.status == "completed", stored.detail
    (global_item,) = world.active("global")
    assert_withheld_from_p(world)

    refused = world.round("project")  # and straight into P: code refuses the plan
    assert refused.status == "failed" and any("forgotten value" in o.reason for o in refused.overrides)
    assert not world.active(P) and all(SECRET in a.edits[0].text for a in world.model.answers)
    assert_withheld_from_p(world)

    context, found, folder = q_reads(world)  # another project still reads the global item
    assert str(global_item.item_id) in context and SECRET in context
    assert str(global_item.item_id) in [h["id"] for h in json.loads(found)["hits"]]
    assert SECRET in folder["MEMORY.md"]
    for name, text in rendered(world, None, "shared").items():  # the shared folder is read in P too
        assert "falcon" not in text.lower(), f"render (every project): {name}"

    world.store.rebuild()  # a rebuilt view withholds the same
    assert_withheld_from_p(world)


def test_a_project_tombstone_leaves_another_projects_own_items_alone(
    store_factory: StoreFactory, database_url: str | None, tmp_path: Path
) -> None:
    world = make_world(store_factory, database_url, tmp_path)
    (q_item,) = world.active(Q)

    forgot = forget_in(world, "--project", P)

    assert str(q_item.item_id) not in forgot["retired"] and world.active(Q) == [q_item]
    assert forgot["scrubbed_sessions"] == [str(session(1))]  # Q's session keeps its text
    context, found, folder = q_reads(world)
    assert str(q_item.item_id) in context and SECRET in context
    assert str(q_item.item_id) in [h["id"] for h in json.loads(found)["hits"]]
    assert SECRET in folder["MEMORY.md"] and SECRET in folder["raw_memories.md"]
    assert_withheld_from_p(world)


def test_a_global_tombstone_reaches_every_project(store_factory: StoreFactory, database_url: str | None, tmp_path: Path) -> None:
    world = make_world(store_factory, database_url, tmp_path)
    forget_in(world, "--project", P)
    assert world.round("global").status == "completed"
    carriers = {str(i.item_id) for i in (*world.active(Q), *world.active("global"))}
    assert len(carriers) == 2

    forgot = forget_in(world)

    assert forgot["scope"] == "global" and carriers <= set(forgot["retired"])
    assert not world.active(Q) and not world.active("global")
    context, found, folder = q_reads(world)
    assert "falcon" not in context.lower() and json.loads(found)["hits"] == []
    for name, text in {**folder, **rendered(world, None, "shared")}.items():
        assert "falcon" not in text.lower(), name
    assert_withheld_from_p(world)


def test_a_global_note_carrying_a_project_forgotten_value_runs_offline_and_stays_out_of_that_project(
    store_factory: StoreFactory, database_url: str | None, tmp_path: Path
) -> None:
    """The user's own path: forget in P, then a global note with the value, then `run --all` on the offline models."""
    world = make_world(store_factory, database_url, tmp_path)
    forget_in(world, "--project", P)

    code, out = world.cli("note", f"For all my projects: {SENTENCE} before a release.", "--scope", "global", "--json")
    assert code == 0, out
    code, out = world.cli("run", str(world.folder), "--all", "--json")  # no API key: the offline models
    assert code == 0, out
    ran = json.loads(out)
    assert ran["consolidate"]["status"] == "completed" and ran["consolidate"]["items"]["added"] >= 1, ran["consolidate"]

    (noted,) = [i for i in world.active("global") if "before a release" in i.text]
    assert_withheld_from_p(world)
    context, found, folder = q_reads(world)  # Q reads the note's global item, value and all
    assert str(noted.item_id) in context and SECRET in context
    assert str(noted.item_id) in [h["id"] for h in json.loads(found)["hits"]]
    assert "before a release" in folder["MEMORY.md"]
