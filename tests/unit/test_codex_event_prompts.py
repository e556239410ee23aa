"""A Codex rollout whose prompts are recorded only as ``event_msg`` ``user_message`` (the VS Code extension) is learnt from.

Codex 0.128 from VS Code writes each prompt as an ``event_msg`` of type
``user_message`` and no ``response_item`` user message: it was "ineligible (no
user message)" though it held three prompts. A rollout that records a prompt
both ways keeps it once.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mnemolog.adapters.session_files import read_session as read_rollout
from mnemolog.domain.eligibility import EligibilityPolicy, assess_eligibility
from mnemolog.domain.transcript import ItemKind

PROMPTS = (
    "Why does the checkout page flash white on load?",
    "Move the theme script into the head so it runs before first paint.",
    "Now add a test that fails if the script ends up after the stylesheet.",
)


def _line(kind: str, payload: dict[str, Any], minute: int) -> str:
    return json.dumps({"timestamp": f"2026-05-11T11:{minute:02d}:00.000Z", "type": kind, "payload": payload})


def vscode_rollout(path: Path, *, also_as_response_items: bool = False) -> Path:
    meta = {"id": "019e1625-789d-76c0-80ab-3724b5ddb799", "timestamp": "2026-05-11T11:00:00.000Z", "cwd": "/home/dev/shop",
            "originator": "codex_vscode", "cli_version": "0.128.0", "source": "vscode"}
    lines = [_line("session_meta", meta, 0)]
    for n, prompt in enumerate(PROMPTS, start=1):
        lines.append(_line("event_msg", {"type": "task_started", "turn_id": f"turn-{n}"}, n * 3))
        lines.append(_line("event_msg", {"type": "user_message", "message": prompt, "images": []}, n * 3))
        if also_as_response_items:
            lines.append(_line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}, n * 3))
        lines.append(_line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Done with step {n}."}]}, n * 3 + 1))
        lines.append(_line("event_msg", {"type": "agent_message", "message": f"Done with step {n}."}, n * 3 + 1))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_prompts_recorded_only_as_events_are_the_users_messages(tmp_path: Path) -> None:
    transcript = read_rollout(vscode_rollout(tmp_path / "rollout.jsonl"))
    users = [i.text for i in transcript.items if i.kind is ItemKind.USER]
    assert users == list(PROMPTS)
    assert transcript.user_message_count == 3
    kinds = [i.kind for i in transcript.items]
    assert kinds.index(ItemKind.USER) < kinds.index(ItemKind.ASSISTANT), "each prompt stands before the answer to it"


def test_such_a_session_is_eligible(tmp_path: Path) -> None:
    from mnemolog.domain.services.ingest import facts_for

    transcript = read_rollout(vscode_rollout(tmp_path / "rollout.jsonl"))
    facts = facts_for(transcript, "h", 0, None, "path:/home/dev/shop")
    later = datetime(2026, 5, 11, 11, 0, tzinfo=UTC) + timedelta(days=1)
    eligible, reasons = assess_eligibility(facts, later, EligibilityPolicy(max_age=None))
    assert eligible, reasons


def test_a_prompt_recorded_both_ways_counts_once(tmp_path: Path) -> None:
    transcript = read_rollout(vscode_rollout(tmp_path / "rollout.jsonl", also_as_response_items=True))
    assert [i.text for i in transcript.items if i.kind is ItemKind.USER] == list(PROMPTS)
