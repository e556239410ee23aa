"""Finding and reading recorded agent sessions on disk.

A session file is JSON Lines, plain (``*.jsonl``) or zstd-compressed
(``*.jsonl.zst``). Files are read as bytes and decoded one line at a time, so a
bad line (truncated, not UTF-8, too long, not JSON) is counted in
``Transcript.skipped`` and the rest of the file is still read. Problems with the
file as a whole raise :class:`SessionReadError` with a one-line message.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import zstandard
from mnemolog.adapters.claude_reader import CLAUDE_LINE_TYPES, read_claude_records
from mnemolog.adapters.codex_reader import read_codex_records
from mnemolog.adapters.transcript_lines import with_lines
from mnemolog.domain.ports import SessionUnreadable
from mnemolog.domain.transcript import Transcript

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Lines longer than this are skipped (reason ``line too long``) without being held whole."""

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_DRAIN_CHUNK = 1024 * 1024
_SNIFF_BYTES = 256 * 1024
_SUFFIXES = (".jsonl", ".jsonl.zst")

CODEX = "codex"
CLAUDE_CODE = "claude-code"
UNKNOWN = "unknown"


class SessionReadError(SessionUnreadable):
    """A session file could not be read at all; ``str(error)`` is a one-line message."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"cannot read session file {self.path}: {reason}")


@dataclass(frozen=True)
class SessionFile:
    """A discovered session file, its guessed source agent, and a per-file error if any."""

    path: Path
    source: str  # "codex" | "claude-code" | "unknown"
    error: str | None = None


@dataclass
class DecodedLines:
    """The JSON objects of a session file, with counts of what could not be decoded."""

    records: list[dict[str, Any]] = field(default_factory=list)
    record_lines: list[int] = field(default_factory=list)  # the file line (1 = first) of each record
    line_count: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        """Count one skipped line under ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


# --------------------------------------------------------------------------- roots


def default_session_roots(env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """Where agents keep their sessions, as ``(source, folder)`` pairs.

    Codex: ``$CODEX_HOME`` (default ``~/.codex``) ``/sessions`` and
    ``/archived_sessions``. Claude Code: ``$CLAUDE_CONFIG_DIR`` (default
    ``~/.claude``) ``/projects``. The home folder is ``env["HOME"]`` (or
    ``USERPROFILE``). Folders are listed whether or not they exist.
    """
    home_text = env.get("HOME") or env.get("USERPROFILE")
    home = Path(home_text) if home_text else Path.home()
    codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    claude_home = (
        Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    )
    return [
        (CODEX, codex_home / "sessions"),
        (CODEX, codex_home / "archived_sessions"),
        (CLAUDE_CODE, claude_home / "projects"),
    ]


def default_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Both agents' default session folders that exist (``env`` defaults to the process environment)."""
    roots = default_session_roots(os.environ if env is None else env)
    return [path for _, path in roots if path.exists()]


# ----------------------------------------------------------------------- discovery


def _is_session_name(name: str) -> bool:
    return name.endswith(_SUFFIXES)


def _os_error_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop"
    if isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "file not found (or a broken symlink)"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    return exc.strerror or str(exc)


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[SessionFile]:
    """Find session files (``*.jsonl``, ``*.jsonl.zst``) under files or folders, recursively.

    Symlinked folders are followed, but each real folder is visited once, so a
    symlink loop cannot recurse forever; a file that cannot be opened (a symlink
    loop, a broken link) is listed with ``error`` set instead of raising. A file
    named explicitly is listed whatever its suffix. The result is sorted by path
    and has no duplicates.
    """
    found: dict[Path, SessionFile] = {}
    visited_dirs: set[tuple[int, int]] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            for file_path in _walk(path, visited_dirs):
                found.setdefault(file_path, _describe(file_path))
        else:
            found.setdefault(path, _describe(path))
    return [found[key] for key in sorted(found)]


def _walk(root: Path, visited: set[tuple[int, int]]) -> Iterator[Path]:
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            info = folder.stat()
        except OSError:
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            continue
        visited.add(key)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            entry_path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=True)
            except OSError:
                is_dir = False
            if is_dir:
                stack.append(entry_path)
            elif _is_session_name(entry.name):
                yield entry_path


def _describe(path: Path) -> SessionFile:
    try:
        os.stat(path)
    except OSError as exc:
        return SessionFile(
            path=path, source=_source_from_location(path) or UNKNOWN, error=_os_error_reason(exc)
        )
    source = _source_from_location(path)
    if source is None:
        source = _source_from_content(path)
    return SessionFile(path=path, source=source)


def _source_from_location(path: Path) -> str | None:
    parts = {part.lower() for part in path.parts}
    name = path.name
    if ".codex" in parts or name.startswith("rollout-"):
        return CODEX
    if ".claude" in parts:
        return CLAUDE_CODE
    return None


def _source_from_content(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF_BYTES)
            if head.startswith(_ZSTD_MAGIC):
                handle.seek(0)
                reader = zstandard.ZstdDecompressor().stream_reader(handle)
                head = reader.read(_SNIFF_BYTES)
    except (OSError, zstandard.ZstdError):
        return UNKNOWN
    records: list[dict[str, Any]] = []
    for line in head.splitlines()[:20]:
        try:
            value = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(value, dict):
            records.append(value)
    detected = detect_format(records)
    if detected is None:
        return UNKNOWN
    return CLAUDE_CODE if detected == CLAUDE_CODE else CODEX


# ------------------------------------------------------------------------- reading


def content_hash(path: str | os.PathLike[str]) -> str:
    """Return the hex SHA-256 of the file's raw bytes (compressed bytes for ``.zst``)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(_DRAIN_CHUNK), b""):
                digest.update(chunk)
    except OSError as exc:
        raise SessionReadError(path, _os_error_reason(exc)) from exc
    return digest.hexdigest()


def _iter_raw_lines(stream: IO[bytes], max_line_bytes: int) -> Iterator[bytes | None]:
    """Yield each line's bytes, or ``None`` for a line over the cap (drained, never held)."""
    while True:
        chunk = stream.readline(max_line_bytes + 1)
        if not chunk:
            return
        if len(chunk) > max_line_bytes and not chunk.endswith(b"\n"):
            while True:
                more = stream.readline(_DRAIN_CHUNK)
                if not more or more.endswith(b"\n"):
                    break
            yield None
            continue
        yield chunk


def _decode_into(lines: DecodedLines, stream: IO[bytes], max_line_bytes: int) -> None:
    first = True
    for physical, raw in enumerate(_iter_raw_lines(stream, max_line_bytes), start=1):
        if raw is None:
            lines.line_count += 1
            lines.skip("line too long")
            first = False
            continue
        if first and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        first = False
        if not raw.strip():
            continue
        lines.line_count += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            lines.skip("invalid utf-8")
            continue
        try:
            value = json.loads(text)
        except ValueError:
            lines.skip("unparseable line")
            continue
        if not isinstance(value, dict):
            lines.skip("unparseable line")
            continue
        lines.records.append(value)
        lines.record_lines.append(physical)


def decode_lines(
    path: str | os.PathLike[str], *, max_line_bytes: int = MAX_LINE_BYTES
) -> DecodedLines:
    """Read a (possibly zstd-compressed) JSON Lines file into objects, counting bad lines.

    Raises :class:`SessionReadError` for an empty, unreadable or undecompressable file.
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise SessionReadError(path, _os_error_reason(exc)) from exc
    if os.path.isdir(path):
        raise SessionReadError(path, "is a directory")
    if info.st_size == 0:
        raise SessionReadError(path, "empty file")
    lines = DecodedLines()
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
            handle.seek(0)
            if magic == _ZSTD_MAGIC:
                reader = zstandard.ZstdDecompressor().stream_reader(handle)
                _decode_into(lines, io.BufferedReader(reader), max_line_bytes)
            else:
                _decode_into(lines, handle, max_line_bytes)
    except zstandard.ZstdError as exc:
        raise SessionReadError(path, f"not a valid zstd file ({exc})") from exc
    except OSError as exc:
        raise SessionReadError(path, _os_error_reason(exc)) from exc
    return lines


def detect_format(records: Iterable[Mapping[str, Any]]) -> str | None:
    """Name the format of a session from its first objects.

    Returns ``"codex"`` (envelope lines with ``type`` and ``payload``),
    ``"codex-legacy"`` (a bare first line with ``id``/``timestamp``/
    ``instructions``, ``record_type`` markers), ``"claude-code"`` (lines with
    ``sessionId``/``uuid`` and a Claude line type) or ``None``.
    """
    for index, record in enumerate(records):
        if index >= 50:
            break
        kind = record.get("type")
        if isinstance(kind, str) and isinstance(record.get("payload"), dict):
            return CODEX
        if (
            index == 0
            and kind is None
            and "id" in record
            and "timestamp" in record
            and ("instructions" in record or "git" in record)
        ):
            return "codex-legacy"
        if "record_type" in record and kind is None:
            return "codex-legacy"
        if (
            isinstance(kind, str)
            and kind in CLAUDE_LINE_TYPES
            and "payload" not in record
            and ("sessionId" in record or "uuid" in record or kind == "summary")
        ):
            return CLAUDE_CODE
    return None


def read_session(
    path: str | os.PathLike[str], *, max_line_bytes: int = MAX_LINE_BYTES
) -> Transcript:
    """Read one Codex or Claude Code session file into a ``Transcript``.

    The format is detected from the content, not the name. Line-level problems
    are counted in ``Transcript.skipped``; file-level problems (empty, no
    permission, symlink loop, bad zstd data, not a session file, no readable
    line) raise :class:`SessionReadError`.
    """
    lines = decode_lines(path, max_line_bytes=max_line_bytes)
    if not lines.records:
        summary = ", ".join(f"{count} {reason}" for reason, count in sorted(lines.skipped.items()))
        raise SessionReadError(path, f"no readable lines ({summary or 'only blank lines'})")
    kind = detect_format(lines.records)
    shown_path = os.path.abspath(path)
    if kind in (CODEX, "codex-legacy"):
        transcript = read_codex_records(
            lines.records, path=shown_path, line_count=lines.line_count, skipped=lines.skipped
        )
    elif kind == CLAUDE_CODE:
        transcript = read_claude_records(
            lines.records, path=shown_path, line_count=lines.line_count, skipped=lines.skipped
        )
    else:
        raise SessionReadError(path, "not a Codex or Claude Code session file")
    return with_lines(transcript, lines.records, lines.record_lines)


class SessionFiles:
    """The session source ingest reads: Codex and Claude Code files on disk."""

    def discover(self, paths: Sequence[Path]) -> list[SessionFile]:
        """Every session file under ``paths`` (see :func:`discover`)."""
        return discover(paths)

    def content_hash(self, path: Path) -> str:
        """The SHA-256 of the file's raw bytes; raises :class:`SessionReadError`."""
        return content_hash(path)

    def read(self, path: Path) -> Transcript:
        """The file's transcript; raises :class:`SessionReadError`."""
        return read_session(path)
