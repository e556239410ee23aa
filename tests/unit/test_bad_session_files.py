"""Bad input: what a user sees when a session file is damaged or unreadable."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import zstandard
from mnemolog.adapters.session_files import (
    SessionFiles,
    SessionReadError,
    content_hash,
    default_paths,
    default_session_roots,
    discover,
    read_session,
)
from mnemolog.domain.ports import SessionUnreadable
from support.shared_fixtures import shared_fixture

META = {
    "timestamp": "2026-02-01T08:00:00.000Z",
    "type": "session_meta",
    "payload": {
        "id": "019c1111-2222-7333-8444-555566667777",
        "cwd": "/src/app",
        "timestamp": "2026-02-01T08:00:00.000Z",
        "source": "cli",
    },
}
PROMPT = {
    "timestamp": "2026-02-01T08:00:01.000Z",
    "type": "response_item",
    "payload": {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Add a --dry-run flag"}],
    },
}


def _jsonl(*records: object) -> bytes:
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def test_truncated_last_line_is_counted_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(_jsonl(META, PROMPT) + b'{"timestamp":"2026-02-01T08:00:02Z","type":"resp')
    t = read_session(path)
    assert t.meta.native_id == "019c1111-2222-7333-8444-555566667777"
    assert t.user_message_count == 1
    assert t.skipped == {"unparseable line": 1}
    assert t.line_count == 3


def test_non_utf8_line_is_skipped_and_the_rest_is_read(tmp_path: Path) -> None:
    bad = b'{"timestamp":"2026-02-01T08:00:02Z","type":"event_msg","payload":{"m":"caf\xe9"}}\n'
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(_jsonl(META) + bad + _jsonl(PROMPT))
    t = read_session(path)
    assert t.user_message_count == 1
    assert t.skipped == {"invalid utf-8": 1}


def test_a_50_mb_line_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(_jsonl(META))
        handle.write(
            b'{"timestamp":"2026-02-01T08:00:02Z","type":"response_item","payload":'
            b'{"type":"function_call_output","call_id":"x","output":"'
        )
        chunk = b"A" * (1024 * 1024)
        for _ in range(50):
            handle.write(chunk)
        handle.write(b'"}}\n')
        handle.write(_jsonl(PROMPT))
    tracemalloc.start()
    try:
        t = read_session(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t.skipped == {"line too long": 1}
    assert t.user_message_count == 1
    assert t.line_count == 3
    assert peak < 24 * 1024 * 1024  # the 50 MB line is never held whole


def test_line_cap_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "small-cap.jsonl"
    path.write_bytes(_jsonl(META, PROMPT))
    cap = len(json.dumps(PROMPT)) + 1
    assert len(json.dumps(META)) + 1 > cap
    t = read_session(path, max_line_bytes=cap)
    assert t.skipped == {"line too long": 1}  # the meta line is over the cap
    assert t.user_message_count == 1


def test_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(SessionReadError, match="empty file"):
        read_session(path)


def test_nothing_parseable_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(b"not json\n\xff\xfe\n")
    with pytest.raises(
        SessionReadError, match=r"no readable lines \(1 invalid utf-8, 1 unparseable"
    ):
        read_session(path)


def test_the_session_source_reports_a_bad_file_as_the_port_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    source = SessionFiles()
    assert [found.path for found in source.discover([tmp_path])] == [path]
    with pytest.raises(SessionUnreadable, match="empty file"):  # what ingest catches
        source.read(path)


def test_json_that_is_not_a_session_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_bytes(_jsonl({"name": "x", "value": 1}, {"name": "y", "value": 2}))
    with pytest.raises(SessionReadError, match="not a Codex or Claude Code session file"):
        read_session(path)


def test_symlink_loop_is_a_per_file_error(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.symlink_to(second)
    second.symlink_to(first)
    good = tmp_path / "good.jsonl"
    good.write_bytes(_jsonl(META, PROMPT))
    found = {item.path.name: item for item in discover([tmp_path])}
    assert set(found) == {"a.jsonl", "b.jsonl", "good.jsonl"}
    assert found["a.jsonl"].error == "symlink loop"
    assert found["good.jsonl"].error is None
    assert found["good.jsonl"].source == "codex"
    with pytest.raises(SessionReadError, match="symlink loop"):
        read_session(first)


def test_folder_symlink_loop_does_not_recurse_forever(tmp_path: Path) -> None:
    nested = tmp_path / "2026" / "02"
    nested.mkdir(parents=True)
    (nested / "rollout-x.jsonl").write_bytes(_jsonl(META))
    (nested / "back").symlink_to(tmp_path, target_is_directory=True)
    found = discover([tmp_path])
    assert [item.path.name for item in found] == ["rollout-x.jsonl"]


def test_no_read_permission_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "private.jsonl"
    path.write_bytes(_jsonl(META, PROMPT))
    if os.geteuid() == 0:
        # Root reads any file whatever its mode: emulate the refusal the OS would give.
        real_open = os.open

        def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if os.fspath(file) == os.fspath(path):
                raise PermissionError(13, "Permission denied", os.fspath(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing_open)
    else:
        path.chmod(0)
    with pytest.raises(SessionReadError, match="permission denied") as caught:
        read_session(path)
    assert "\n" not in str(caught.value)
    assert str(path) in str(caught.value)


def test_zstd_compressed_rollout_reads_like_the_plain_file(tmp_path: Path) -> None:
    plain = shared_fixture(
        "codex-rollouts/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    )
    packed = tmp_path / f"{plain.name}.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    from_plain, from_packed = read_session(plain), read_session(packed)
    assert from_packed.items == from_plain.items
    assert from_packed.meta.model_copy(update={"path": ""}) == from_plain.meta.model_copy(
        update={"path": ""}
    )
    assert from_packed.line_count == from_plain.line_count
    assert [item.path.name for item in discover([tmp_path])] == [packed.name]
    assert content_hash(packed) != content_hash(plain)  # the hash is of the raw bytes


def test_corrupt_zstd_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl.zst"
    packed = zstandard.ZstdCompressor().compress(_jsonl(META, PROMPT) * 50)
    path.write_bytes(packed[:12] + b"\x00" * 40 + packed[52:])
    with pytest.raises(SessionReadError, match="zstd"):
        read_session(path)


def test_content_hash_is_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"abc")
    assert content_hash(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_default_roots_follow_the_environment(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert default_session_roots({"HOME": str(home)}) == [
        ("codex", home / ".codex" / "sessions"),
        ("codex", home / ".codex" / "archived_sessions"),
        ("claude-code", home / ".claude" / "projects"),
    ]
    roots = default_session_roots({"HOME": str(home), "CODEX_HOME": str(tmp_path / "cx")})
    assert roots[0] == ("codex", tmp_path / "cx" / "sessions")
    assert roots[1] == ("codex", tmp_path / "cx" / "archived_sessions")
    assert default_paths({"HOME": str(home)}) == []  # only folders that exist
    (home / ".claude" / "projects").mkdir(parents=True)
    assert default_paths({"HOME": str(home)}) == [home / ".claude" / "projects"]


def test_discover_guesses_the_agent_from_location_and_content(tmp_path: Path) -> None:
    claude_dir = tmp_path / ".claude" / "projects" / "-src-app"
    claude_dir.mkdir(parents=True)
    (claude_dir / "s.jsonl").write_bytes(b"{}\n")
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "x.jsonl").write_bytes(
        _jsonl({"type": "user", "uuid": "u", "sessionId": "s", "message": {"content": "hi"}})
    )
    (loose / "notes.txt").write_text("ignored")
    found = {item.path.name: item.source for item in discover([tmp_path])}
    assert found == {"s.jsonl": "claude-code", "x.jsonl": "claude-code"}
