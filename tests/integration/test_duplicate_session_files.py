"""One session id in several files (Codex's sessions/ and archived_sessions/, a .jsonl beside its .jsonl.zst) is recorded once."""

from __future__ import annotations

from pathlib import Path

import zstandard
from mnemolog.domain.services.ingest import IngestOutcome
from support.session_pipeline import ingest_files
from support.sessions import thread_id, write_rollout


def test_one_session_in_several_files_is_recorded_once(store_factory, tmp_path: Path) -> None:
    store = store_factory()
    live, archived = tmp_path / "sessions", tmp_path / "archived_sessions"
    original = write_rollout(live, thread_id(1), "Fix the flaky retry test")
    archived.mkdir()
    (archived / original.name).write_bytes(original.read_bytes())  # Codex's archive copy
    packed = archived / (original.name + ".zst")  # and a compressed one beside it
    packed.write_bytes(zstandard.ZstdCompressor().compress(original.read_bytes()))

    first = ingest_files(store, [tmp_path])
    assert (first.new, first.duplicate) == (1, 2)
    second = ingest_files(store, [tmp_path])
    assert (second.new, second.updated) == (0, 0), second

    # The copy that grows is the one recorded from then on.
    with original.open("a") as handle:
        handle.write(original.read_text().splitlines(keepends=True)[1])
    third = ingest_files(store, [tmp_path])
    assert third.updated == 1 and third.duplicate + third.unchanged == 2
    assert ingest_files(store, [tmp_path]).updated == 0
    assert IngestOutcome.DUPLICATE.value == "duplicate"
