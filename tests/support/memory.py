"""Memory items written straight to the log, for read-path tests (no models involved)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.domain.memory_item import EditedBy, MemoryItem, Trust


def item(
    scope: str,
    text: str,
    *,
    kind: str = "knowledge",
    title: str = "",
    keywords: tuple[str, ...] = (),
    trust: Trust = Trust.PROPOSED,
    task_group: str = "general",
    evidence: tuple[UUID, ...] = (),
) -> MemoryItem:
    """A new (unsaved) item as a consolidation would add it."""
    return MemoryItem(
        kind=kind,
        scope=scope,
        task_group=task_group,
        title=title,
        text=text,
        keywords=keywords,
        evidence=evidence,
        valid_from=datetime(2026, 10, 1, tzinfo=UTC),
        consolidation_id=None,
        reason="test",
        trust=trust,
        by=EditedBy.USER,
    )


def save(store: Store, *items: MemoryItem) -> list[str]:
    """Save items in one transaction, catch the views up; their ids as strings."""
    store.app.save_all(*items)
    store.catch_up()
    return [str(i.id) for i in items]


def git_project(folder: Path, remote: str) -> Path:
    """A git work tree at ``folder`` whose origin is ``remote``."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def extracted_session(
    store: Store,
    native_id: str,
    scope: str,
    summary: str,
    *,
    updated_at: datetime,
    cwd: str = "/home/dev/project",
) -> UUID:
    """A Codex session with a current extraction (a phase-2 candidate); returns its id."""
    from datetime import timedelta

    from mnemolog.domain.session import Session, SessionFacts
    from mnemolog.domain.transcript import ItemKind, TranscriptItem

    facts = SessionFacts(
        source="codex",
        native_id=native_id,
        path=f"{cwd}/.codex/rollout-{native_id}.jsonl",
        cwd=cwd,
        scope=scope,
        started_at=updated_at - timedelta(minutes=30),
        updated_at=updated_at,
        content_hash=f"hash-{native_id}",
        first_user_message="do the task",
    )
    session = Session(facts=facts, transcript=(TranscriptItem(kind=ItemKind.USER, text="do the task"),))
    session.assess(True, ())
    session.claim_extraction("test", updated_at, timedelta(minutes=5), 3)
    session.record_extraction(
        rollout_summary=summary,
        rollout_slug=None,
        raw_memory=f"---\ndescription: {summary}\n---\n### Task 1\nReusable knowledge:\n- {summary}",
        model="scripted",
        prompt_hash="p",
        input_tokens=1,
        output_tokens=1,
        plain_input_tokens=1,
        redactions=0,
    )
    store.app.save_all(session)
    store.catch_up()
    session_id: UUID = session.id
    return session_id
