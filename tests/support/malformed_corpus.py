"""Malformed session files of our own, each with the outcome ingest must give it.

Every case writes one file (or one thing named like a session file) into a
folder. Expected outcomes:

- ``INGESTED``: the session is recorded and nothing is reported (the odd
  value is made storable: a lone surrogate becomes U+FFFD, a bad timestamp
  is ignored, a huge exit code is no exit code).
- ``LINE_SKIPPED``: the session is recorded from its other lines; the bad
  line is counted in ``lines_skipped`` and a warning names the file and line.
- ``FIELD_DROPPED``: the session is recorded without the field (a cwd no
  file system could hold, a relative cwd); a warning names the file.
- ``FILE_SKIPPED``: nothing is recorded from it; an error names the file and
  the run goes on (exit code 3).
- ``IGNORED``: not a session file at all (a folder named ``x.jsonl``): neither
  recorded nor reported.

The run-wide limits the corpus assumes are in ``LIMITS`` (smaller than the
defaults so the size cases stay cheap).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

INGESTED = "ingested"
LINE_SKIPPED = "line skipped"
FIELD_DROPPED = "field dropped"
FILE_SKIPPED = "file skipped"
IGNORED = "ignored"

LIMITS = {"MNEMOLOG_MAX_LINE_BYTES": str(256 * 1024), "MNEMOLOG_MAX_FILE_BYTES": str(2 * 1024 * 1024)}
WHEN = "2026-10-20T10:00:00.000Z"


@dataclass(frozen=True)
class Case:
    """One malformed input and what ingest must make of it."""

    name: str
    expect: str
    write: Callable[[Path, int], Path]  # (folder, case number) -> the path written


def thread(number: int) -> str:
    """The Codex thread id of case ``number``."""
    return f"019b{number:04x}-0000-7000-8000-{number:012x}"


def claude_id(number: int) -> str:
    """The Claude Code session id of case ``number``."""
    return f"7c{number:06x}-1111-4222-8333-{number:012x}"


def _line(value: Any) -> bytes:
    return json.dumps(value).encode() + b"\n"


def codex_lines(number: int, meta: dict[str, Any] | None = None) -> list[bytes]:
    """A small good Codex rollout: meta, a user message, an assistant answer."""
    payload = {"id": thread(number), "timestamp": WHEN, "cwd": "/home/dev/corpus", "source": "cli",
               "cli_version": "0.130.0", **(meta or {})}
    return [
        _line({"timestamp": WHEN, "type": "session_meta", "payload": payload}),
        _line({"timestamp": WHEN, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"Fix case {number}"}]}}),
        _line({"timestamp": WHEN, "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]}}),
    ]


def claude_lines(number: int, envelope: dict[str, Any] | None = None) -> list[bytes]:
    """A small good Claude Code transcript: a prompt and an answer."""
    base = {"sessionId": claude_id(number), "cwd": "/home/dev/corpus", "gitBranch": "main", "version": "2.1.50",
            "isSidechain": False, "userType": "external", **(envelope or {})}
    return [
        _line({**base, "type": "user", "uuid": f"u-{number}-1", "timestamp": WHEN,
               "message": {"role": "user", "content": f"Fix case {number}"}}),
        _line({**base, "type": "assistant", "uuid": f"u-{number}-2", "timestamp": WHEN,
               "message": {"id": f"m{number}", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}]}}),
    ]


def _rollout_path(folder: Path, number: int) -> Path:
    return folder / f"rollout-2026-10-20T10-00-00-{thread(number)}.jsonl"


def codex_with(bad: bytes | list[bytes], meta: dict[str, Any] | None = None) -> Callable[[Path, int], Path]:
    """A good rollout with ``bad`` line(s) after the user message."""

    def write(folder: Path, number: int) -> Path:
        lines = codex_lines(number, meta)
        extra = bad if isinstance(bad, list) else [bad]
        path = _rollout_path(folder, number)
        path.write_bytes(b"".join([*lines[:2], *extra, *lines[2:]]))
        return path

    return write


def codex_item(payload: dict[str, Any], **envelope: Any) -> Callable[[Path, int], Path]:
    """A good rollout with one odd response item."""
    return codex_with(_line({"timestamp": WHEN, "type": "response_item", "payload": payload, **envelope}))


def codex_event(payload: dict[str, Any]) -> Callable[[Path, int], Path]:
    """A good rollout with one odd event message."""
    return codex_with(_line({"timestamp": WHEN, "type": "event_msg", "payload": payload}))


def claude_with(bad: bytes | list[bytes], envelope: dict[str, Any] | None = None) -> Callable[[Path, int], Path]:
    """A good Claude Code transcript with ``bad`` line(s) between prompt and answer."""

    def write(folder: Path, number: int) -> Path:
        lines = claude_lines(number, envelope)
        extra = bad if isinstance(bad, list) else [bad]
        target = folder / ".claude" / "projects" / "corpus"
        target.mkdir(parents=True, exist_ok=True)
        path = target / f"{claude_id(number)}.jsonl"
        path.write_bytes(b"".join([lines[0], *extra, lines[1]]))
        return path

    return write


def claude_record(record: dict[str, Any]) -> Callable[[Path, int], Path]:
    """A good transcript with one odd line (the envelope fields filled in)."""

    def write(folder: Path, number: int) -> Path:
        base = {"sessionId": claude_id(number), "cwd": "/home/dev/corpus", "timestamp": WHEN, "uuid": f"odd-{number}"}
        return claude_with(_line({**base, **record}))(folder, number)

    return write


def raw_file(content: bytes, name: str = "") -> Callable[[Path, int], Path]:
    """A file with exactly ``content``."""

    def write(folder: Path, number: int) -> Path:
        path = folder / name if name else _rollout_path(folder, number)
        path.write_bytes(content)
        return path

    return write


def _fifo(folder: Path, number: int) -> Path:
    path = _rollout_path(folder, number)
    os.mkfifo(path)
    return path


def _link_to(target: str) -> Callable[[Path, int], Path]:
    def write(folder: Path, number: int) -> Path:
        path = _rollout_path(folder, number)
        path.symlink_to(target)
        return path

    return write


def _socket_file(folder: Path, number: int) -> Path:
    path = _rollout_path(folder, number)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.chdir(folder):  # socket paths are short (108 bytes): bind by name
            server.bind(path.name)
    finally:
        server.close()
    return path


def _loop(folder: Path, number: int) -> Path:
    path = _rollout_path(folder, number)
    other = folder / f"loop-{number}.jsonl"
    path.symlink_to(other.name)
    other.symlink_to(path.name)
    return path


def _folder_named_like_a_session(folder: Path, number: int) -> Path:
    path = folder / f"folder-{number}.jsonl"
    path.mkdir()
    return path


def _zstd(content: bytes) -> Callable[[Path, int], Path]:
    def write(folder: Path, number: int) -> Path:
        path = folder / f"rollout-2026-10-20T10-00-00-{thread(number)}.jsonl.zst"
        path.write_bytes(zstandard.ZstdCompressor().compress(content))
        return path

    return write


def _zstd_bomb(folder: Path, number: int) -> Path:
    good = b"".join(codex_lines(number))
    filler = _line({"timestamp": WHEN, "type": "event_msg", "payload": {"type": "token_count", "pad": "x" * 1000}})
    return _zstd(good + filler * 3000)(folder, number)  # ~3 MB decompressed: over the 2 MB limit


def _non_utf8_name(folder: Path, number: int) -> Path:
    name = os.fsdecode(b"rollout-2026-10-20T10-00-00-\xff\xfe-" + thread(number).encode() + b".jsonl")
    path = folder / name
    path.write_bytes(b"".join(codex_lines(number)))
    return path


def _unreadable_folder(folder: Path, number: int) -> Path:
    inner = folder / f"locked-{number}"
    inner.mkdir()
    _rollout_path(inner, number).write_bytes(b"".join(codex_lines(number)))
    inner.chmod(0)
    return inner


def _deep(depth: int, kind: str = "[") -> bytes:
    close = "]" if kind == "[" else "}"
    inner = (kind if kind == "[" else '{"a":') * depth
    body = inner + "1" + close * depth
    return b'{"timestamp": "' + WHEN.encode() + b'", "type": "event_msg", "payload": {"type": "x", "v": ' + body.encode() + b"}}\n"


def _escaped(text: str) -> bytes:
    """A user message line whose JSON text holds ``text`` verbatim (escapes included)."""
    return (
        b'{"timestamp": "' + WHEN.encode() + b'", "type": "response_item", "payload": {"type": "message", '
        b'"role": "user", "content": [{"type": "input_text", "text": "' + text.encode() + b'"}]}}\n'
    )


def _big_digits(count: int) -> str:
    return "9" * count


CASES: list[Case] = [
    # -- strings that cannot be stored as they are
    Case("lone high surrogate (a string cut mid-emoji)", INGESTED, codex_with(_escaped("cut here \\ud83d"))),
    Case("lone low surrogate", INGESTED, codex_with(_escaped("\\ude00 then text"))),
    Case("reversed surrogate pair", INGESTED, codex_with(_escaped("\\ude00\\ud83d"))),
    Case("NUL escaped in a string", INGESTED, codex_with(_escaped("before\\u0000after"))),
    Case("surrogate in a key", INGESTED, codex_with(b'{"timestamp": "' + WHEN.encode() + b'", "type": "event_msg", "payload": {"type": "x", "\\ud800": 1}}\n')),
    Case("surrogate inside a JSON-string tool output", INGESTED, codex_item(
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"output": "x"}).replace("x", "\\\\ud83d")})),
    Case("lone surrogate in the cwd", INGESTED, codex_with([], meta={"cwd": "/home/dev/\ud83d"})),
    # -- nesting
    Case("array nested 5000 deep", LINE_SKIPPED, codex_with(_deep(5000))),
    Case("object nested 5000 deep", LINE_SKIPPED, codex_with(_deep(5000, "{"))),
    Case("array nested 100 deep (over the limit of 64)", LINE_SKIPPED, codex_with(_deep(100))),
    Case("nested 60 deep (under the limit)", INGESTED, codex_with(_deep(60))),
    Case("claude line nested 3000 deep", LINE_SKIPPED, claude_with(_deep(3000))),
    # -- timestamps
    Case("timestamp at the calendar's end with an offset", INGESTED, codex_with([], meta={"timestamp": "9999-12-31T23:59:59-05:00"})),
    Case("timestamp at the calendar's start with an offset", INGESTED, codex_item(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, timestamp="0001-01-01T00:00:00+05:00")),
    Case("timestamp not a date", INGESTED, codex_item(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, timestamp="yesterday")),
    Case("timestamp a number", INGESTED, codex_item(
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, timestamp=1e308)),
    Case("timestamp year 2999 (in the future)", FIELD_DROPPED, codex_with([], meta={"timestamp": "2999-01-01T00:00:00Z"})),
    Case("claude timestamp at the calendar's end", INGESTED, claude_record(
        {"type": "assistant", "timestamp": "9999-12-31T23:59:59.999-12:00",
         "message": {"id": "mx", "role": "assistant", "content": [{"type": "text", "text": "late"}]}})),
    Case("claude timestamp a list", INGESTED, claude_record(
        {"type": "assistant", "timestamp": [1, 2], "message": {"id": "my", "role": "assistant", "content": [{"type": "text", "text": "x"}]}})),
    # -- numbers
    Case("claude tool result 'Exit code' with 5000 digits", INGESTED, claude_record(
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Exit code " + _big_digits(5000)}]}})),
    Case("codex exec output 'Process exited with code' with 5000 digits", INGESTED, codex_item(
        {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code " + _big_digits(5000)})),
    Case("codex metadata exit_code 10**30", INGESTED, codex_item(
        {"type": "function_call_output", "call_id": "c1", "output": json.dumps({"output": "x", "metadata": {"exit_code": 10**30}})})),
    Case("integer literal of 5000 digits", LINE_SKIPPED, codex_with(
        b'{"timestamp": "' + WHEN.encode() + b'", "type": "event_msg", "payload": {"type": "x", "n": ' + _big_digits(5000).encode() + b"}}\n")),
    Case("NaN and Infinity", INGESTED, codex_with(
        b'{"timestamp": "' + WHEN.encode() + b'", "type": "event_msg", "payload": {"type": "token_count", "a": NaN, "b": -Infinity}}\n')),
    # -- citations
    Case("memory_citation.rollout_ids a number", INGESTED, codex_event(
        {"type": "agent_message", "message": "done", "memory_citation": {"rollout_ids": 42, "entries": []}})),
    Case("memory_citation.rolloutIds a string", INGESTED, codex_event(
        {"type": "agent_message", "message": "done", "memory_citation": {"rolloutIds": "019a0000-0000-7000-8000-000000000001"}})),
    Case("memory_citation.entries a number", INGESTED, codex_event(
        {"type": "agent_message", "message": "done", "memory_citation": {"rollout_ids": [], "entries": 7}})),
    Case("memory_citation a list", INGESTED, codex_event({"type": "agent_message", "message": "done", "memory_citation": [1]})),
    Case("memory_citation entry lineStart a string", INGESTED, codex_event(
        {"type": "agent_message", "message": "done", "memory_citation": {"entries": [{"path": "MEMORY.md", "lineStart": "x"}]}})),
    # -- working folders
    Case("claude cwd longer than the file-system limit", FIELD_DROPPED, claude_with([], {"cwd": "/" + "d" * 5000})),
    Case("codex cwd longer than the file-system limit", FIELD_DROPPED, codex_with([], meta={"cwd": "/home/" + "x/" * 3000})),
    Case("cwd with a NUL", INGESTED, codex_with([], meta={"cwd": "/home/dev/a\u0000b"})),
    Case("relative cwd '.'", FIELD_DROPPED, codex_with([], meta={"cwd": "."})),
    Case("cwd a number", INGESTED, codex_with([], meta={"cwd": 7})),
    Case("cwd a dict", INGESTED, codex_with([], meta={"cwd": {"path": "/x"}})),
    Case("git branch 5000 characters", FIELD_DROPPED, claude_with([], {"gitBranch": "b" * 5000})),
    Case("git block a string", INGESTED, codex_with([], meta={"git": "main"})),
    Case("git repository_url a dict", INGESTED, codex_with([], meta={"git": {"repository_url": {"a": 1}, "branch": 3}})),
    Case("session id 5000 characters", FIELD_DROPPED, codex_with([], meta={"id": "i" * 5000})),
    # -- shapes
    Case("payload a list", LINE_SKIPPED, codex_with(_line({"timestamp": WHEN, "type": "response_item", "payload": [1, 2]}))),
    Case("payload a string", LINE_SKIPPED, codex_with(_line({"timestamp": WHEN, "type": "response_item", "payload": "x"}))),
    Case("type a number", LINE_SKIPPED, codex_with(_line({"timestamp": WHEN, "type": 5, "payload": {}}))),
    Case("content a number", INGESTED, codex_item({"type": "message", "role": "user", "content": 5})),
    Case("content part text a number", INGESTED, codex_item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": 5}]})),
    Case("function_call arguments a dict", INGESTED, codex_item({"type": "function_call", "name": "shell", "call_id": "c9", "arguments": {"cmd": "ls"}})),
    Case("function_call name a list", INGESTED, codex_item({"type": "function_call", "name": ["a"], "call_id": "c9", "arguments": "{}"})),
    Case("function_call_output output a number", INGESTED, codex_item({"type": "function_call_output", "call_id": "c9", "output": 12})),
    Case("claude message null", INGESTED, claude_record({"type": "user", "message": None})),
    Case("claude content a dict", INGESTED, claude_record({"type": "user", "message": {"role": "user", "content": {"a": 1}}})),
    Case("claude content block type a number", LINE_SKIPPED, claude_record(
        {"type": "assistant", "message": {"id": "mz", "role": "assistant", "content": [{"type": 3}]}})),
    Case("claude tool_use input a string", INGESTED, claude_record(
        {"type": "assistant", "message": {"id": "mw", "role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": "ls"}]}})),
    Case("claude sessionId a number", INGESTED, claude_record({"type": "summary", "sessionId": 12, "summary": "x"})),
    Case("claude uuid a dict", INGESTED, claude_record({"type": "user", "uuid": {"a": 1}, "message": {"role": "user", "content": "more"}})),
    # -- line level
    Case("truncated last line", LINE_SKIPPED, codex_with(b'{"timestamp": "2026-10-20T10:00:00Z", "type": "resp')),
    Case("top-level JSON array", LINE_SKIPPED, codex_with(b"[1, 2, 3]\n")),
    Case("top-level JSON string", LINE_SKIPPED, codex_with(b'"just a string"\n')),
    Case("invalid UTF-8 bytes", LINE_SKIPPED, codex_with(b'{"timestamp": "x", "type": "event_msg", "payload": {"t": "\xff\xfe"}}\n')),
    Case("line over the line limit", LINE_SKIPPED, codex_with(_escaped("y" * 300_000))),
    Case("a 200 KB message under the limit", INGESTED, codex_with(_escaped("z" * 200_000))),
    Case("BOM and CRLF line ends", INGESTED, lambda folder, number: raw_file(
        b"\xef\xbb\xbf" + b"".join(line.replace(b"\n", b"\r\n") for line in codex_lines(number)))(folder, number)),
    Case("blank lines between records", INGESTED, codex_with([b"\n", b"   \n", b"\t\n"])),
    Case("binary garbage line", LINE_SKIPPED, codex_with(bytes(range(256)) + b"\n")),
    # -- files
    Case("FIFO named like a rollout", FILE_SKIPPED, _fifo),
    Case("link to /dev/zero named like a rollout", FILE_SKIPPED, _link_to("/dev/zero")),
    Case("link to /dev/null named like a rollout", FILE_SKIPPED, _link_to("/dev/null")),
    Case("link to /dev/urandom", FILE_SKIPPED, _link_to("/dev/urandom")),
    Case("unix socket named like a rollout", FILE_SKIPPED, _socket_file),
    Case("symlink loop", FILE_SKIPPED, _loop),
    Case("broken symlink", FILE_SKIPPED, _link_to("/nonexistent/rollout.jsonl")),
    Case("empty file", FILE_SKIPPED, raw_file(b"")),
    Case("only blank lines", FILE_SKIPPED, raw_file(b"\n\n  \n")),
    Case("only garbage lines", FILE_SKIPPED, raw_file(b"not json\nstill not\n")),
    Case("JSON lines that are not a session", FILE_SKIPPED, raw_file(_line({"hello": "world"}) * 3)),
    Case("corrupt zstd data", FILE_SKIPPED, raw_file(b"\x28\xb5\x2f\xfd" + b"\x00garbage" * 10)),
    Case("zstd that decompresses past the file limit", FILE_SKIPPED, _zstd_bomb),
    Case("good zstd rollout", INGESTED, lambda folder, number: _zstd(b"".join(codex_lines(number)))(folder, number)),
    Case("file over the file limit", FILE_SKIPPED, codex_with([_escaped("w" * 200_000)] * 12)),
    Case("file name that is not UTF-8", INGESTED, _non_utf8_name),
    Case("folder named like a session file", IGNORED, _folder_named_like_a_session),
    Case("sixty bad lines in one file", LINE_SKIPPED, codex_with([b"[1]\n"] * 60)),
]
"""The corpus: each case numbered by its index + 1 (thread ids and session ids derive from it)."""

if os.geteuid() != 0:  # root reads any folder whatever its mode
    CASES.append(Case("unreadable folder", FILE_SKIPPED, _unreadable_folder))


def write_corpus(folder: Path, cases: list[Case] | None = None) -> dict[int, Path]:
    """Write every case (or ``cases``) into ``folder``; returns case number -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    chosen = CASES if cases is None else cases
    return {CASES.index(case) + 1: case.write(folder, CASES.index(case) + 1) for case in chosen}


def good_sessions(folder: Path, count: int = 3) -> list[Path]:
    """Good rollouts to sit beside the bad ones (case numbers 9001..)."""
    paths = []
    for n in range(count):
        path = _rollout_path(folder, 9100 + n)
        path.write_bytes(b"".join(codex_lines(9100 + n)))
        paths.append(path)
    return paths
