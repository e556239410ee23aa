"""Ingesting real agent sessions into the log, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.projections.schema import table
from support.raw_events import raw_log_contains
from support.secrets_corpus import SECRETS, write_claude_transcript, write_codex_rollout
from support.session_pipeline import ingest_files
from support.shared_fixtures import shared_fixture

ALL = EligibilityPolicy(max_age=None)

# file -> (source, native id, cwd, git branch, first user message prefix, items, user messages, eligible)
EXPECTED = {
    "codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl": (
        "codex", "019e1625-789d-76c0-80ab-3724b5ddb799", "/Users/Sample_User/repos/codemie-ai/codemie-code",
        "feat/codex-agent-plugin", "show tools", 223, 2, 1,
    ),
    "codex-rollouts/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl": (
        "codex", "019b7f94-51b4-7593-922e-ba12b5b73b52", "/Users/Nikita_Levyankov/repos/EPMCDME/codemie-ai/codemie-code",
        "codex", "what is current repository about?", 8, 1, 0,
    ),
    "codex-rollouts/rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl": (
        "codex", "019b7f95-0000-7000-0000-000000000001", "/path/to/codemie-code", "codex", None, 6, 0, 0,
    ),
    "codex-rollouts/codemie-session-turn-2.jsonl": (
        "codex", "a1b2c3d4-e5f6-7890-abcd-ef1234567890", "/home/user/project", "main", "Hello, Codex!", 6, 2, 0,
    ),
    "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": (
        "claude-code", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "/path/to/Demo", "main", "/orchestrator", 30, 1, 1,
    ),
    "claude-code/agent-a2898e3.jsonl": (
        "claude-code", "4d5611e5-241a-462a-8d15-5122611a9569:agent-a2898e3", "/home/USER/projects/spotter-worktrees/spotter-dov",
        "spotter-dov", "Very thorough exploration.", 74, 1, 0,
    ),
    "claude-code/sample_main_transcript.jsonl": (
        "claude-code", "c45af7b1-cb7c-4e51-93db-8cbb250a877a", "/workspace", None, "can you run a command ls -la", 32, 6, 1,
    ),
    "claude-code/tool_heavy.jsonl": (
        "claude-code", "d6e0bada-1959-4eec-a9d2-0bfade768d8f", "/home/marco/projects/spotter", "master",
        "start phoenix in background", 18, 5, 1,
    ),
    "claude-code/transcript.jsonl": (
        "claude-code", "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f", "/tmp/tmpqwh7888i", "master",
        "Port this Python project to Rust.", 95, 1, 1,
    ),
}


def copy_fixtures(target: Path) -> dict[str, Path]:
    copies = {}
    for rel in EXPECTED:
        source = shared_fixture(rel)
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        copies[rel] = dest
    return copies


def sessions_by_path(store) -> dict[str, dict]:
    rows = store.reads().query(f"SELECT * FROM {table('sessions')}")
    return {row["path"]: row for row in rows}


def test_every_fixture_is_ingested_file_by_file(store_factory, tmp_path: Path) -> None:
    copies = copy_fixtures(tmp_path / "sessions")
    store = store_factory()

    report = ingest_files(store, [tmp_path / "sessions"], ALL)

    assert report.files_read == len(EXPECTED) and report.new == len(EXPECTED) and not report.errors
    rows = sessions_by_path(store)
    for rel, (source, native, cwd, branch, first, items, users, eligible) in EXPECTED.items():
        row = rows[str(copies[rel])]
        assert (row["source"], row["native_id"], row["cwd"], row["git_branch"]) == (source, native, cwd, branch), rel
        if first is None:
            assert row["first_user_message"] is None, rel
        else:
            assert row["first_user_message"].startswith(first), rel
        assert (row["item_count"], row["user_message_count"], row["eligible"]) == (items, users, eligible), rel


def test_ingest_is_incremental(store_factory, tmp_path: Path) -> None:
    copies = copy_fixtures(tmp_path / "sessions")
    store = store_factory()
    ingest_files(store, [tmp_path / "sessions"], ALL)
    events = store.app.max_notification_id()

    again = ingest_files(store, [tmp_path / "sessions"], ALL)
    assert again.unchanged == len(EXPECTED) and again.new == again.updated == 0
    assert store.app.max_notification_id() == events

    grown = copies["codex-rollouts/codemie-session-turn-2.jsonl"]
    with grown.open("a") as handle:
        handle.write(
            '{"timestamp":"2026-01-03T10:00:00.000Z","type":"response_item","payload":{"type":"message",'
            '"role":"user","content":[{"type":"input_text","text":"One more question"}]}}\n'
        )
    third = ingest_files(store, [tmp_path / "sessions"], ALL)
    assert third.updated == 1 and third.unchanged == len(EXPECTED) - 1
    new_events = [
        store.app.mapper.to_domain_event(n)
        for n in store.app.recorder.select_notifications(start=events + 1, limit=100)
    ]
    assert [type(e).__name__ for e in new_events] == ["Updated"]


def test_planted_secrets_never_reach_the_log(store_factory, tmp_path: Path) -> None:
    folder = tmp_path / "secrets"
    folder.mkdir()
    write_codex_rollout(folder)
    write_claude_transcript(folder)
    store = store_factory()

    report = ingest_files(store, [folder], ALL)

    assert report.files_read == 2 and report.redactions >= 2 * len(SECRETS)
    assert len(SECRETS) >= 30
    leaked = [kind for kind, value in SECRETS if raw_log_contains(store, value)]
    assert leaked == []
    assert not any(value in str(store.reads().dump()) for _, value in SECRETS)


def test_ssh_and_https_clones_share_a_project_scope(store_factory, tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    for n, remote in enumerate(("git@github.com:acme/widgets.git", "https://github.com/acme/widgets")):
        thread = f"019c0000-0000-7000-8000-00000000000{n}"
        meta = {"id": thread, "timestamp": "2026-03-01T10:00:00.000Z", "cwd": f"/home/dev/clone{n}",
                "source": "cli", "git": {"branch": "main", "repository_url": remote}}
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}
        lines = [
            {"timestamp": "2026-03-01T10:00:00.000Z", "type": "session_meta", "payload": meta},
            {"timestamp": "2026-03-01T10:00:01.000Z", "type": "response_item", "payload": user},
        ]
        (folder / f"rollout-2026-03-0{n + 1}T10-00-00-{thread}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines)
        )
    store = store_factory()
    ingest_files(store, [folder], ALL)
    scopes = {row["scope"] for row in sessions_by_path(store).values()}
    assert scopes == {"git:github.com/acme/widgets"}


def test_external_context_marks_a_session_polluted(store_factory, tmp_path: Path) -> None:
    copies = copy_fixtures(tmp_path / "sessions")
    store = store_factory(disable_on_external_context=True)
    report = ingest_files(store, [tmp_path / "sessions"], ALL)
    rows = sessions_by_path(store)
    web = rows[str(copies["codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"])]
    assert web["mode"] == "polluted" and "web search" in web["mode_reason"]
    assert report.polluted >= 1
