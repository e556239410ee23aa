"""Pieces of folder models for renderer tests: a word-counting tokenizer and sessions."""

from __future__ import annotations

from datetime import datetime

from mnemolog.projections.folder_model import FolderSession


def words(text: str) -> int:
    """Token counter for tests: whitespace-separated words."""
    return len(text.split())


def folder_session(n: int, scope: str, at: datetime) -> FolderSession:
    """Codex session number ``n`` in ``scope``, started and updated at ``at``."""
    return FolderSession(
        session_id=f"5e55{n:04x}-0000-4000-8000-000000000000",
        native_id=f"0197{n:04x}-0000-7000-8000-{n:012x}",
        source="codex",
        path=f"/home/u/.codex/sessions/rollout-{n}.jsonl",
        cwd=f"/src/{scope.split(':')[-1]}",
        scope=scope,
        git_branch=None,
        started_at=at,
        updated_at=at,
        rollout_summary=f"summary {n}",
        rollout_slug=f"session {n}",
        raw_memory=f"raw memory {n}",
    )
