"""The ingest service in memory: a fake session source, redactor and scope lookup."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.store import Store
from mnemolog.domain.citation import Citation
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.memory_item import MemoryItem
from mnemolog.domain.ports import SessionUnreadable
from mnemolog.domain.services.ingest import IngestReport, ingest
from mnemolog.domain.session import Session, session_id_for
from mnemolog.domain.tombstone import Tombstone
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK, fingerprint
from mnemolog.domain.transcript import (
    CitationRef,
    ItemKind,
    SessionMeta,
    Transcript,
    TranscriptItem,
)
from support.memory import item, save

ALL = EligibilityPolicy(max_age=None)
SECRET = "hunter2-password"
WHEN = datetime(2026, 10, 30, 9, 0, tzinfo=UTC)


def transcript(native_id: str, *texts: str, remote: str | None = "acme/api", web: bool = False, cites: tuple[str, ...] = ()) -> Transcript:
    """A Codex transcript with one user message per text."""
    meta = SessionMeta(source="codex", native_id=native_id, path=f"/sessions/{native_id}.jsonl", cwd="/home/dev/api",
                       git_remote=remote, started_at=WHEN, updated_at=WHEN, first_user_message=texts[0] if texts else None)
    items = tuple(TranscriptItem(kind=ItemKind.USER, text=t) for t in texts)
    refs = tuple(CitationRef(rollout_ids=(c,), entries=("MEMORY.md:1-2",)) for c in cites)
    return Transcript(meta=meta, items=items, line_count=len(items) + 1, used_web_search=web, citations=refs,
                      skipped={"unparseable line": 1})


@dataclass(frozen=True)
class Found:
    path: Path
    error: str | None = None


class FakeSessions:
    """Session files held in memory: path -> (content hash, transcript), or an error."""

    def __init__(self) -> None:
        self.files: dict[Path, tuple[str, Transcript] | str] = {}
        self.read_count = 0

    def put(self, t: Transcript, digest: str) -> None:
        self.files[Path(t.meta.path)] = (digest, t)

    def discover(self, paths: object) -> list[Found]:
        return [Found(p, "symlink loop" if self.files[p] == "loop" else None) for p in sorted(self.files)]

    def content_hash(self, path: Path) -> str:
        entry = self.files[path]
        if isinstance(entry, str):
            raise SessionUnreadable(f"cannot read session file {path}: {entry}")
        return entry[0]

    def read(self, path: Path) -> Transcript:
        self.read_count += 1
        entry = self.files[path]
        assert not isinstance(entry, str)
        return entry[1]


class FakeRedactor:
    """Replaces one known secret."""

    def redact(self, text: str) -> tuple[str, int]:
        return text.replace(SECRET, "[REDACTED_SECRET]"), text.count(SECRET)

    def redact_transcript(self, t: Transcript) -> tuple[Transcript, int]:
        total, items = 0, []
        for i in t.items:
            text, n = self.redact(i.text)
            total += n
            items.append(i.model_copy(update={"text": text}))
        first, n = self.redact(t.meta.first_user_message or "")
        return t.model_copy(update={"items": tuple(items), "meta": t.meta.model_copy(update={"first_user_message": first or None})}), total + n


class FakeScopes:
    def remote_of(self, t: Transcript) -> str | None:
        return t.meta.git_remote

    def scope_key(self, remote: str | None, cwd: str | None) -> str:
        return f"git:{remote}" if remote else f"path:{cwd}"


def run(store: Store, sessions: FakeSessions, *, pollutes: bool = False) -> IngestReport:
    return ingest(store, sessions, [Path("/sessions")], ALL, redactor=FakeRedactor(), scopes=FakeScopes(),
                  external_context_pollutes=pollutes)


def session(store: Store, native_id: str) -> Session:
    found: Session = store.app.repository.get(session_id_for("codex", native_id))
    return found


def test_new_updated_and_unchanged_files(memory_store: Store) -> None:
    sessions = FakeSessions()
    sessions.put(transcript("a", "Fix the retry test"), "h1")
    sessions.put(transcript("b", "Add an endpoint"), "h2")

    first = run(memory_store, sessions)
    assert (first.files_read, first.new, first.updated, first.unchanged) == (2, 2, 0, 0)
    assert first.lines_skipped == {"unparseable line": 2} and not first.partial
    events = memory_store.app.max_notification_id()

    again = run(memory_store, sessions)
    assert (again.files_read, again.new, again.updated, again.unchanged) == (2, 0, 0, 2)
    assert sessions.read_count == 2  # unchanged bytes are not read again
    assert memory_store.app.max_notification_id() == events

    sessions.put(transcript("b", "Add an endpoint", "And its tests"), "h3")
    third = run(memory_store, sessions)
    assert (third.new, third.updated, third.unchanged) == (0, 1, 1)
    b = session(memory_store, "b")
    assert b.facts.content_hash == "h3" and b.facts.scope == "git:acme/api" and len(b.transcript) == 2
    assert b.eligible


def test_a_file_that_cannot_be_read_is_reported_and_the_rest_ingested(memory_store: Store) -> None:
    sessions = FakeSessions()
    sessions.put(transcript("a", "Fix the retry test"), "h1")
    sessions.files[Path("/sessions/broken.jsonl")] = "permission denied"
    sessions.files[Path("/sessions/loop.jsonl")] = "loop"

    report = run(memory_store, sessions)

    assert report.new == 1 and report.partial
    assert report.errors == [
        {"path": "/sessions/broken.jsonl", "error": "cannot read session file /sessions/broken.jsonl: permission denied"},
        {"path": "/sessions/loop.jsonl", "error": "cannot read session file /sessions/loop.jsonl: symlink loop"},
    ]
    assert report.as_dict()["partial"] is True


def test_secrets_and_tombstoned_values_never_reach_the_log(memory_store: Store) -> None:
    digest, width = fingerprint(memory_store.tombstone_key(), "blue falcon")
    memory_store.app.save_all(Tombstone(digest=digest, width=width, scope="global", reason="test"))
    sessions = FakeSessions()
    sessions.put(transcript("a", f"The password is {SECRET}", "Deploy with blue falcon"), "h1")

    report = run(memory_store, sessions)

    assert report.redactions == 2  # the first message and its item
    a = session(memory_store, "a")
    texts = [i.text for i in a.transcript]
    assert texts == ["The password is [REDACTED_SECRET]", f"Deploy with {FORGOTTEN_MARK}"]
    assert SECRET not in (a.facts.first_user_message or "") and a.facts.redactions == 2


def test_external_context_pollutes_and_retires_the_items_it_was_the_only_evidence_of(memory_store: Store) -> None:
    sessions = FakeSessions()
    sessions.put(transcript("a", "Fix the retry test"), "h1")
    sessions.put(transcript("b", "Add an endpoint"), "h2")
    run(memory_store, sessions, pollutes=True)
    a, b = session_id_for("codex", "a"), session_id_for("codex", "b")
    only_a, both = item("git:acme/api", "retry needs REDIS_URL", evidence=(a,)), item("git:acme/api", "run make test", evidence=(a, b))
    save(memory_store, only_a, both)

    sessions.put(transcript("a", "Fix the retry test", "Search the docs", web=True), "h3")
    report = run(memory_store, sessions, pollutes=True)

    assert report.polluted == 1 and report.updated == 1
    assert session(memory_store, "a").mode == "polluted"
    retired: MemoryItem = memory_store.app.repository.get(only_a.id)
    kept: MemoryItem = memory_store.app.repository.get(both.id)
    assert not retired.is_active and kept.is_active
    assert [i.item_id for i in memory_store.reads().active_items()] == [both.id]


def test_external_context_is_kept_unless_configured(memory_store: Store) -> None:
    sessions = FakeSessions()
    sessions.put(transcript("a", "Search the docs", web=True), "h1")
    assert run(memory_store, sessions).polluted == 0
    assert session(memory_store, "a").mode == "enabled"


def test_citations_in_a_session_are_recorded_once(memory_store: Store) -> None:
    sessions = FakeSessions()
    sessions.put(transcript("a", "Use memory", cites=("019a0001-0000-7000-8000-000000000001",)), "h1")
    assert run(memory_store, sessions).citations == 1

    sessions.put(transcript("a", "Use memory", "More", cites=("019a0001-0000-7000-8000-000000000001",)), "h2")
    assert run(memory_store, sessions).citations == 0  # the same citation, read again
    citation: Citation = memory_store.app.repository.get(Citation.create_id(key="ingest:codex:a:0"))
    assert citation.session_ids == (session_id_for("codex", "019a0001-0000-7000-8000-000000000001"),)
