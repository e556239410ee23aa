"""The session file reader's defences, one by one (the corpus in tests/e2e runs them all through the CLI)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters import session_files
from mnemolog.adapters.session_files import (
    ReadLimits,
    SessionReadError,
    content_hash,
    discover,
    read_session,
)
from support.malformed_corpus import codex_lines, thread


def _rollout(tmp_path: Path, *extra: bytes, number: int = 1) -> Path:
    lines = codex_lines(number)
    path = tmp_path / f"rollout-2026-10-20T10-00-00-{thread(number)}.jsonl"
    path.write_bytes(b"".join([*lines[:2], *extra, *lines[2:]]))
    return path


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / f"rollout-2026-10-20T10-00-00-{thread(2)}.jsonl"
    os.mkfifo(fifo)
    assert discover([tmp_path])[0].error == "not a regular file (a FIFO)"
    for call in (content_hash, read_session):
        with pytest.raises(SessionReadError, match="FIFO"):
            call(fifo)


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.scandir

    def scandir(path: Any) -> Any:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(session_files.os, "scandir", scandir)
    found = discover([tmp_path])
    assert [(f.path, f.error) for f in found] == [(locked, "cannot list this folder: permission denied")]


def test_the_limits_are_the_callers(tmp_path: Path) -> None:
    path = _rollout(tmp_path, b'{"type": "event_msg", "payload": {"type": "x", "pad": "' + b"p" * 5000 + b'"}}\n')
    assert read_session(path).skipped == {}
    small = ReadLimits(max_line_bytes=1000)
    assert read_session(path, limits=small).skipped == {"line too long": 1}
    with pytest.raises(SessionReadError, match="max_file_bytes"):
        read_session(path, limits=ReadLimits(max_file_bytes=1000))
    deep = _rollout(tmp_path, b'{"type": "event_msg", "payload": {"v": [[[[[[1]]]]]]}}\n', number=3)
    assert read_session(deep, limits=ReadLimits(max_nesting=4)).skipped == {"nested too deep": 1}


def test_a_record_the_reader_cannot_take_is_skipped_by_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _rollout(tmp_path, json.dumps({"type": "event_msg", "payload": {"type": "boom"}}).encode() + b"\n")
    real = session_files.read_codex_records

    def fragile(records: list[dict[str, Any]], **kwargs: Any) -> Any:
        if any(r.get("payload", {}).get("type") == "boom" for r in records):
            raise KeyError("boom")  # a reader bug on one record
        return real(records, **kwargs)

    monkeypatch.setattr(session_files, "read_codex_records", fragile)
    transcript = read_session(path)
    assert transcript.skipped == {"invalid field (KeyError)": 1}
    assert transcript.warnings == (f"{path}:3: invalid field (KeyError) (line skipped)",)
    assert [item.text for item in transcript.items] == ["Fix case 1", "Fixed."]


def test_unstorable_text_is_made_storable(tmp_path: Path) -> None:
    line = b'{"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a\\ud83d b\\u0000c"}]}}\n'
    transcript = read_session(_rollout(tmp_path, line))
    texts = [item.text for item in transcript.items]
    assert "a\ufffd b\ufffdc" in texts
    for text in texts:
        text.encode("utf-8")  # storable


@pytest.mark.parametrize(("cwd", "kept"), [("/home/dev/app", True), (".", False), ("relative/dir", False),
                                            ("/" + "x" * 5000, False), ("C:\\Users\\dev\\app", True), ("~/src/app", True)])
def test_a_cwd_must_be_an_absolute_path_of_sane_length(tmp_path: Path, cwd: str, kept: bool) -> None:
    lines = codex_lines(4, {"cwd": cwd})
    path = tmp_path / f"rollout-2026-10-20T10-00-00-{thread(4)}.jsonl"
    path.write_bytes(b"".join(lines))
    transcript = read_session(path)
    assert (transcript.meta.cwd == cwd) is kept
    assert bool(transcript.warnings) is not kept
