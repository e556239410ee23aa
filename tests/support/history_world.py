"""A small memory with one item of every kind of history: two runs, a note, a citation, a forgotten value.

The history port's tests and its benchmark tell its story (``explain``) and audit its runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from mnemolog.adapters.redaction import SecretRedactor
from mnemolog.adapters.store import Store
from mnemolog.domain.citation import Citation
from mnemolog.domain.plan import ConsolidationPlan, Edit
from mnemolog.domain.services import forget as forgetting
from mnemolog.domain.services.notes import add_note
from mnemolog.domain.session import session_id_for

from support.consolidating import run_consolidation
from support.forgetting import ALL, API, clean_memory
from support.scripted_models import ScriptedConsolidator, ScriptedExtractor, handle_for
from support.session_pipeline import extract_all, ingest_files
from support.sessions import thread_id, write_rollout

S1 = session_id_for("codex", thread_id(1))
S2 = session_id_for("codex", thread_id(2))


def _edit(op: str, text: str = "", target: str | None = None, evidence=(S1,), title: str = "Testing", **extra: Any) -> Edit:
    return Edit(op=op, target=target, kind="knowledge", scope=API, task_group="api", title=title, text=text,
                keywords=("make",), evidence=tuple(str(e) for e in evidence), reason=f"{op} because", **extra)


def story_world(store: Store, tmp_path: Path) -> tuple[Store, tuple[UUID, UUID], Any, Any]:  # (store, (testing, deploy), first run, second run)
    """Two sessions; a run adds two items, a note's run revises one, an agent cites it, a forget retires the other."""
    folder = tmp_path / "sessions"
    write_rollout(folder, thread_id(1), "Fix the retry test.", when="2026-10-20T10:00:00.000Z")
    write_rollout(folder, thread_id(2), "Add the export endpoint.", when="2026-10-21T10:00:00.000Z")
    ingest_files(store, [folder], ALL)
    extract_all(store, ScriptedExtractor(default=lambda t: clean_memory(int(t.meta.native_id[-2:], 16))), ALL)
    first = run_consolidation(store, ScriptedConsolidator(ConsolidationPlan(edits=(
        _edit("add", "Run make test before pushing."),
        _edit("add", "Deploy with blue-falcon-42 on staging.", evidence=(S2,), title="Deploy"),
    ))), all_sessions=True)
    noted = add_note(store, "Prefer make test-all.", "correct", API, SecretRedactor()).note_id
    second = run_consolidation(store, ScriptedConsolidator(lambda req: ConsolidationPlan(edits=(
        _edit("revise", "Run make test-all before pushing.", handle_for(req, lambda i: i.title == "Testing"), evidence=(S1, S2, noted)),
    ))), all_sessions=True)
    assert first.status == second.status == "completed"
    testing = next(i.item_id for i in store.reads().active_items() if i.title == "Testing")
    store.app.save_all(Citation(item_ids=(testing,), session_ids=(), citing_session="019a-later",
                                cited_at=datetime(2026, 11, 2, 9, 0, tzinfo=UTC), source="mcp"))
    deploy = next(i.item_id for i in store.reads().active_items() if i.title == "Deploy")
    forgetting.forget_value(store, "blue-falcon-42", "global")
    return store, (testing, deploy), first, second
