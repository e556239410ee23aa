"""A small real pipeline around a value a user will want forgotten, and scripted models that keep re-adding it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.session import session_id_for

from support.consolidating import rendered, run_consolidation
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor, memory
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout

SECRET = "blue-falcon-42"
SENTENCE = f"Deploy with {SECRET} on staging"  # every occurrence of SECRET sits inside this sentence
API = "git:github.com/acme/api"
ALL = EligibilityPolicy(max_age=None)


def raw(task: str, knowledge: str) -> str:
    """A stage-1 raw memory in Codex's shape."""
    return (
        f"---\ndescription: {task}\ntask: {task}\ntask_group: api\ntask_outcome: success\n"
        f"keywords: api, deploy\n---\n### Task 1\nReusable knowledge:\n- {knowledge}\n"
    )


def value_memory() -> Any:
    return memory(f"{SENTENCE}. Deployed.", raw("deploy staging", f"{SENTENCE}."), slug="deploy staging")


def clean_memory(n: int) -> Any:
    return memory(f"Added endpoint {n}.", raw(f"add endpoint {n}", f"endpoint {n} streams CSV in chunks"), slug=f"endpoint {n}")


@dataclass
class Scenario:
    """One store with a source session (S1) that carries the value and a clean one (S2)."""

    store: Store
    folder: Path
    adversarial: bool = False  # later: the extractor also writes the value into sessions that never held it
    rounds: int = 0
    threads: list[str] = field(default_factory=list)
    consolidations_seen: list[Any] = field(default_factory=list)  # the answers the scripted model gave
    profile: str = "Deploys often."  # the user profile the scripted model writes

    @property
    def source(self) -> UUID:
        return session_id_for("codex", thread_id(1))

    def extractor(self) -> ScriptedExtractor:
        def answer(transcript: Any) -> Any:
            text = " ".join(i.text for i in transcript.items)
            if transcript.meta.native_id == thread_id(1) or self.adversarial or SECRET in text:
                return value_memory()
            return clean_memory(int(transcript.meta.native_id.rsplit("-", 1)[1], 16))

        return ScriptedExtractor(default=answer)

    def consolidator(self) -> ScriptedConsolidator:
        """Adds the value (citing S1, whatever happened to it) and a clean item per clean input; keeps every item."""

        def plan(request: Any) -> ConsolidationPlan:
            edits = [
                Edit(op="add", kind="knowledge", scope=API, task_group="api", title="Deploy to staging", text=f"{SENTENCE}.",
                     keywords=("deploy", SECRET), evidence=(str(self.source),), reason="the session says so")
            ]
            known = {i.text for i in request.items}
            for inp in request.inputs:
                text = f"Notes from {inp.session_id[:8]}: endpoints stream CSV in chunks."
                if inp.session_id != str(self.source) and text not in known:
                    edits.append(Edit(op="add", kind="knowledge", scope=API, task_group="api", title="CSV export",
                                      text=text, keywords=("csv",), evidence=(inp.session_id,), reason="reusable"))
            return ConsolidationPlan(edits=tuple(edits), user_profile=self.profile)

        consolidator = ScriptedConsolidator(default=plan)
        original = consolidator.consolidate

        def recording(request: Any) -> Any:
            answer = original(request)
            self.consolidations_seen.append(answer)
            return answer

        consolidator.consolidate = recording  # type: ignore[method-assign]
        return consolidator

    def write(self, n: int, text: str, when: str) -> None:
        write_rollout(self.folder, thread_id(n), text, when=when)
        self.threads.append(thread_id(n))

    def round(self) -> Any:
        """Ingest, extract, consolidate once."""
        ingest_files(self.store, [self.folder], ALL)
        extract_all(self.store, self.extractor(), ALL)
        self.rounds += 1
        return run_consolidation(self.store, self.consolidator(), all_sessions=True)

    def value_items(self) -> list[UUID]:
        return [i.item_id for i in self.store.reads().active_items() if SECRET in i.text]


def start(store: Store, tmp_path: Path, profile: str = "Deploys often.") -> Scenario:
    """Two sessions ingested, extracted, consolidated: the value is in memory."""
    scenario = Scenario(store, tmp_path / "sessions", profile=profile)
    scenario.write(1, f"{SENTENCE}, please. Then run make test.", "2026-10-20T10:00:00.000Z")
    scenario.write(2, "Add the export endpoint.", "2026-10-21T10:00:00.000Z")
    result = scenario.round()
    assert result.status == "completed", result.detail
    assert scenario.value_items(), "the value should be in memory before it is forgotten"
    return scenario


@dataclass(frozen=True)
class StartedHome:
    """A SQLite home where ``start`` ran, its store closed: what the CLI tests run ``mnemolog`` against."""

    home: Path
    env: dict[str, str]
    item_id: str  # an item that carries the value
    session_id: str  # the session the value came from


def started_home(tmp_path: Path) -> StartedHome:
    """``start`` in ``tmp_path / "home"``, then the store closed."""
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import open_store

    from support.stores import FixedClock

    home = tmp_path / "home"
    store = open_store(Settings(home=home), clock=FixedClock())
    try:
        scenario = start(store, tmp_path)
        item_id, session_id = str(scenario.value_items()[0]), str(scenario.source)
    finally:
        store.close()
    return StartedHome(home, {"MNEMOLOG_HOME": str(home)}, item_id, session_id)


def everything_an_agent_reads(store: Store) -> dict[str, str]:
    """Every rendered file (whole store and the project) and every projection table, as text."""
    seen: dict[str, str] = {}
    for name, text in rendered(store).items():
        seen[f"folder/{name}"] = text
    for name, text in rendered(store, API).items():
        seen[f"project-folder/{name}"] = text
    for name, rows in store.reads().dump().items():
        seen[f"table/{name}"] = json.dumps(rows, default=str)
    return seen


def home_bytes(home: Path) -> bytes:
    """Every byte of every file under a SQLite home (free pages, journals and WAL included)."""
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


@dataclass(frozen=True)
class Quoted:
    """A store where the value sits in every place a forget reaches, one of them an evidence quote only."""

    carrier_session: UUID  # its summary carries the value
    clean_session: UUID
    carrier: UUID  # an item whose text carries the value
    quoting: UUID  # an item whose text does not, but whose evidence span quotes it
    clean: UUID
    note: UUID  # a note that carries the value
    run: UUID  # a consolidation whose user profile carries it


def quoted(store: Store) -> Quoted:
    """Sessions, items, a note and a user profile written straight to the log (no models), the views caught up."""
    from datetime import UTC, datetime

    from mnemolog.domain.consolidation import Consolidation, InputDiff
    from mnemolog.domain.evidence_spans import EvidenceSpan
    from mnemolog.domain.memory_item import EditedBy, MemoryItem
    from mnemolog.domain.note import Note

    from support.memory import extracted_session, item

    day = datetime(2026, 10, 20, tzinfo=UTC)
    carrier_session = extracted_session(store, thread_id(1), API, f"{SENTENCE}.", updated_at=day)
    clean_session = extracted_session(store, thread_id(2), API, "Added the export endpoint.", updated_at=day)
    carrier = item(API, f"{SENTENCE}.", evidence=(carrier_session,))
    quoting = MemoryItem(
        kind="task", scope=API, task_group="api", title="Staging deploys", text="Deploys to staging go through the release script.",
        keywords=("deploy",), evidence=(carrier_session,), valid_from=day, consolidation_id=None, reason="test", by=EditedBy.MODEL,
        spans=(EvidenceSpan(session_id=carrier_session, line=3, item=0, quote=f"{SENTENCE}, please."),),
    )
    clean = item(API, "Endpoints stream CSV in chunks.", evidence=(clean_session,))
    note = Note(text=f"Remember {SECRET} for staging", intent="remember", scope="global", source="cli", written_at=day)
    run = Consolidation(selection=(), previous_selection=(), diff=InputDiff(), worker="test", model="scripted")
    run.complete(
        added=0, revised=0, retired=0, invalidated=0, overrides=(), model="scripted", prompt_hash="p", user_profile=f"Deploys with {SECRET}."
    )
    store.app.save_all(carrier, quoting, clean, note, run)
    store.catch_up()
    return Quoted(carrier_session, clean_session, carrier.id, quoting.id, clean.id, note.id, run.id)
