"""Finding and reading recorded agent sessions on disk.

A session file is JSON Lines, plain (``*.jsonl``) or zstd-compressed
(``*.jsonl.zst``). Files are read as bytes and decoded one line at a time, so a
bad line (truncated, not UTF-8, too long, nested too deep, not JSON, a field a
reader cannot take) is counted in ``Transcript.skipped``, named with its line
number in ``Transcript.warnings``, and the rest of the file is still read.
Problems with the file as a whole (not a regular file, over the size limit,
bad zstd data, nothing readable) raise :class:`SessionReadError` with a
one-line message. Only regular files are opened, without blocking, so a FIFO
or a device named like a session cannot hang a run; see :class:`ReadLimits`.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import IO, Any

import zstandard
from mnemolog.adapters.claude_reader import CLAUDE_LINE_TYPES, read_claude_records
from mnemolog.adapters.codex_reader import read_codex_records
from mnemolog.adapters.transcript_lines import with_lines
from mnemolog.domain.ports import SessionUnreadable
from mnemolog.domain.transcript import SessionMeta, Transcript

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Lines longer than this are skipped (reason ``line too long``) without being held whole."""
MAX_FILE_BYTES = 1024 * 1024 * 1024
"""Files (decompressed) larger than this are skipped as a whole."""
MAX_NESTING = 64
"""JSON nested deeper than this (arrays and objects) is skipped (reason ``nested too deep``)."""
MAX_BAD_RECORDS = 50
"""A file with more lines than this that no reader can take is skipped as a whole."""
MAX_WARNINGS = 5
"""Line warnings kept per file (the counts in ``skipped`` are complete)."""

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_DRAIN_CHUNK = 1024 * 1024
_SNIFF_BYTES = 256 * 1024
_SUFFIXES = (".jsonl", ".jsonl.zst")

CODEX = "codex"
CLAUDE_CODE = "claude-code"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class ReadLimits:
    """What a session file may hold before a line or the file is skipped (settings ``max_*``)."""

    max_line_bytes: int = MAX_LINE_BYTES
    max_file_bytes: int = MAX_FILE_BYTES
    max_nesting: int = MAX_NESTING


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
    located: str | None  # the source its location tells ("codex" | "claude-code" | "unknown"), None: its content will
    error: str | None = None

    @cached_property
    def source(self) -> str:
        """``"codex"``, ``"claude-code"`` or ``"unknown"``: from the location, else from the first lines
        (read only when asked: ingest detects the format from the content it reads anyway)."""
        return self.located if self.located is not None else _source_from_content(self.path)


@dataclass
class DecodedLines:
    """The JSON objects of a session file, with counts of what could not be decoded."""

    records: list[dict[str, Any]] = field(default_factory=list)
    line_count: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    numbers: list[int] = field(default_factory=list)  # the line number of each record
    texts: list[str] = field(default_factory=list)  # the JSON text of each record (to find an item's line)
    unstorable: bool = False  # a line escapes a surrogate or NUL (the only way a string decoded from it gets one)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)

    def skip(self, reason: str, line: int = 0) -> None:
        """Count one skipped line under ``reason`` (``line``: its number, from 1)."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if line:
            self.problems.append((line, reason))


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
        if _is_dir(path):
            for file_path, error in _walk(path, visited_dirs):
                found.setdefault(file_path, _describe(file_path) if error is None else
                                 SessionFile(file_path, _source_from_location(file_path) or UNKNOWN, error))
        else:
            found.setdefault(path, _describe(path))
    return [found[key] for key in sorted(found)]


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long, a NUL: not a folder we can walk
        return False


def _walk(root: Path, visited: set[tuple[int, int]]) -> Iterator[tuple[Path, str | None]]:
    """Session file names under ``root``, each with None, or a folder that could not be listed with why."""
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
        except OSError as exc:
            # Reported, not skipped silently: the sessions in it are not being read.
            yield folder, f"cannot list this folder: {_os_error_reason(exc)}"
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
                yield entry_path, None


def _describe(path: Path) -> SessionFile:
    try:
        info = os.stat(path)
    except (OSError, ValueError) as exc:
        reason = _os_error_reason(exc) if isinstance(exc, OSError) else "invalid file name"
        return SessionFile(path, _source_from_location(path) or UNKNOWN, reason)
    if not stat.S_ISREG(info.st_mode):
        return SessionFile(path, _source_from_location(path) or UNKNOWN, _not_regular(info.st_mode))
    return SessionFile(path, _source_from_location(path))


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
        with _open_regular(path) as handle:
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
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    detected = detect_format(records)
    if detected is None:
        return UNKNOWN
    return CLAUDE_CODE if detected == CLAUDE_CODE else CODEX


# ------------------------------------------------------------------------- reading


def display_path(path: str | os.PathLike[str]) -> str:
    """``path`` as text that can be stored and printed: bytes that are not UTF-8 become U+FFFD."""
    return os.fsencode(path).decode("utf-8", "replace")


def _not_regular(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a plain file")
    return f"not a regular file ({kind})"


def _open_regular(path: str | os.PathLike[str], limits: ReadLimits | None = None) -> IO[bytes]:
    """Open a regular file for reading; anything else (FIFO, device, socket) raises SessionReadError.

    Opened without blocking, then checked on the open descriptor: a FIFO put in
    place after a check cannot hang the open or the reads.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SessionReadError(display_path(path), _os_error_reason(exc)) from exc
    except ValueError as exc:  # a NUL in the name
        raise SessionReadError(display_path(path), "invalid file name") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SessionReadError(display_path(path), _not_regular(info.st_mode))
        if limits is not None and info.st_size > limits.max_file_bytes:
            raise SessionReadError(display_path(path), _too_large(info.st_size, limits))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _too_large(size: int, limits: ReadLimits) -> str:
    return f"larger than the limit of {limits.max_file_bytes} bytes ({size} bytes; setting max_file_bytes)"


def content_hash(path: str | os.PathLike[str], limits: ReadLimits | None = None) -> str:
    """Return the hex SHA-256 of the file's raw bytes (compressed bytes for ``.zst``).

    Only a regular file within ``limits.max_file_bytes`` is hashed; anything
    else raises :class:`SessionReadError`.
    """
    limits = limits or ReadLimits()
    digest = hashlib.sha256()
    with _open_regular(path, limits) as handle:
        try:
            for chunk in iter(lambda: handle.read(_DRAIN_CHUNK), b""):
                digest.update(chunk)
        except OSError as exc:
            raise SessionReadError(display_path(path), _os_error_reason(exc)) from exc
    return digest.hexdigest()


class _FileTooLarge(Exception):
    pass


class _CappedStream(io.RawIOBase):
    """A read-only stream that raises ``_FileTooLarge`` past ``cap`` bytes (zstd bombs)."""

    def __init__(self, inner: IO[bytes], cap: int) -> None:
        self._inner = inner
        self._left = cap

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        self._left -= len(data)
        if self._left < 0:
            raise _FileTooLarge
        buffer[: len(data)] = data
        return len(data)


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


# A JSON escape of a UTF-16 surrogate (\ud800-\udfff) or of NUL: the only ways a decoded
# string can hold text that cannot be stored (lone surrogates) or that PostgreSQL refuses.
_RISKY_ESCAPE = re.compile(rb"\\u(?:[dD][89a-fA-F]|0000)")
_UNSTORABLE = re.compile("[\ud800-\udfff\x00]")


def _clean_strings(value: Any) -> Any:
    """``value`` with lone surrogates and NULs in every string (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_clean_strings(k): _clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_strings(item) for item in value]
    return value


def _nesting(value: Any, limit: int) -> bool:
    """True when ``value`` nests arrays and objects no deeper than ``limit`` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return False
        children = current.values() if isinstance(current, dict) else current
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def _decode_line(raw: bytes, limits: ReadLimits) -> tuple[dict[str, Any], str] | str:
    """One line's object and its text, or the reason it is skipped."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid utf-8"
    try:
        value = json.loads(text)
    except RecursionError:  # the C decoder recurses: thousands deep fails here, safely
        return "nested too deep"
    except ValueError:
        return "unparseable line"
    if not isinstance(value, dict):
        return "unparseable line"
    # A line with no more brackets than the limit cannot nest deeper (brackets in strings only add).
    if raw.count(b"{") + raw.count(b"[") > limits.max_nesting and not _nesting(value, limits.max_nesting):
        return "nested too deep"
    if b"\\u" in raw and _RISKY_ESCAPE.search(raw):
        cleaned: dict[str, Any] = _clean_strings(value)
        return cleaned, text
    return value, text


def _decode_into(lines: DecodedLines, stream: IO[bytes], limits: ReadLimits) -> None:
    number = 0
    for raw in _iter_raw_lines(stream, limits.max_line_bytes):
        number += 1
        if raw is None:
            lines.line_count += 1
            lines.skip("line too long", number)
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        lines.line_count += 1
        value = _decode_line(raw, limits)
        if isinstance(value, str):
            lines.skip(value, number)
            continue
        if b"\\u" in raw and _RISKY_ESCAPE.search(raw):
            lines.unstorable = True
        lines.records.append(value[0])
        lines.texts.append(value[1])
        lines.numbers.append(number)


def decode_lines(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    limits: ReadLimits | None = None,
) -> DecodedLines:
    """Read a (possibly zstd-compressed) JSON Lines file into objects, counting bad lines.

    Raises :class:`SessionReadError` for an empty, unreadable, oversized, not
    regular or undecompressable file.
    """
    limits = limits or ReadLimits(max_line_bytes=max_line_bytes)
    shown = display_path(path)
    lines = DecodedLines()
    with _open_regular(path, limits) as handle:
        try:
            if os.fstat(handle.fileno()).st_size == 0:
                raise SessionReadError(shown, "empty file")
            magic = handle.read(4)
            handle.seek(0)
            if magic == _ZSTD_MAGIC:
                reader = zstandard.ZstdDecompressor().stream_reader(handle)
                capped = io.BufferedReader(_CappedStream(reader, limits.max_file_bytes))
                _decode_into(lines, capped, limits)
            else:
                _decode_into(lines, handle, limits)
        except zstandard.ZstdError as exc:
            raise SessionReadError(shown, f"not a valid zstd file ({exc})") from exc
        except _FileTooLarge as exc:
            raise SessionReadError(shown, "decompresses to more than the limit of "
                                   f"{limits.max_file_bytes} bytes (setting max_file_bytes)") from exc
        except OSError as exc:
            raise SessionReadError(shown, _os_error_reason(exc)) from exc
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


Reader = Callable[..., Transcript]


def read_session(
    path: str | os.PathLike[str],
    *,
    max_line_bytes: int = MAX_LINE_BYTES,
    limits: ReadLimits | None = None,
) -> Transcript:
    """Read one Codex or Claude Code session file into a ``Transcript``.

    The format is detected from the content, not the name. Line-level problems
    are counted in ``Transcript.skipped`` and named (file and line) in
    ``Transcript.warnings``; file-level problems (empty, no permission, symlink
    loop, not a regular file, over the size limit, bad zstd data, not a session
    file, no readable line) raise :class:`SessionReadError`.
    """
    limits = limits or ReadLimits(max_line_bytes=max_line_bytes)
    lines = decode_lines(path, limits=limits)
    shown_path = display_path(os.path.abspath(path))
    if not lines.records:
        summary = ", ".join(f"{count} {reason}" for reason, count in sorted(lines.skipped.items()))
        raise SessionReadError(shown_path, f"no readable lines ({summary or 'only blank lines'})")
    kind = detect_format(lines.records)
    if kind in (CODEX, "codex-legacy"):
        reader: Reader = read_codex_records
    elif kind == CLAUDE_CODE:
        reader = read_claude_records
    else:
        raise SessionReadError(shown_path, "not a Codex or Claude Code session file")
    transcript = with_lines(_read_guarded(reader, lines, shown_path), lines.records, lines.numbers, lines.texts)  # evidence spans cite lines
    notes = [f"{shown_path}:{line}: {reason} (line skipped)" for line, reason in sorted(lines.problems)]
    if len(notes) > MAX_WARNINGS:
        notes = [*notes[:MAX_WARNINGS], f"{shown_path}: {len(notes) - MAX_WARNINGS} more lines skipped"]
    by_reader = {r: n - lines.skipped.get(r, 0) for r, n in transcript.skipped.items() if n > lines.skipped.get(r, 0)}
    if by_reader:  # lines the reader left out (a shape it does not know), named once per file
        counted = ", ".join(f"{n} {r}" for r, n in sorted(by_reader.items()))
        notes.append(f"{shown_path}: {sum(by_reader.values())} lines skipped ({counted})")
    meta, field_notes = checked_meta(transcript.meta, shown_path)
    transcript = transcript.model_copy(update={"meta": meta, "warnings": (*notes, *field_notes)})
    # Items hold only strings decoded from the lines (JSON inside strings too): with no escape of a
    # surrogate or NUL at any depth they hold none. The metadata holds names from the path as well.
    return storable(transcript, items=lines.unstorable)


def _storable_fields(item: Any) -> Any:
    update = {
        name: _UNSTORABLE.sub("\ufffd", value)
        for name in ("text", "tool", "call_id")
        if isinstance(value := getattr(item, name), str) and _UNSTORABLE.search(value)
    }
    return item.model_copy(update=update) if update else item


def storable(transcript: Transcript, items: bool = True) -> Transcript:
    """``transcript`` with lone surrogates and NULs replaced in every text (readers decode JSON inside strings too).

    ``items=False``: only the metadata's texts are looked at (the caller knows the items hold none).
    """
    meta_update = {
        name: _UNSTORABLE.sub("\ufffd", value)
        for name, value in transcript.meta.model_dump().items()
        if isinstance(value, str) and _UNSTORABLE.search(value)
    }
    if meta_update:
        transcript = transcript.model_copy(update={"meta": transcript.meta.model_copy(update=meta_update)})
    if not items:
        return transcript
    return transcript.model_copy(update={"items": tuple(_storable_fields(item) for item in transcript.items)})


def _read_guarded(reader: Reader, lines: DecodedLines, path: str) -> Transcript:
    """Run ``reader`` over the records; a record it cannot take is dropped as a bad line, not the file.

    A reader raising on some input is a bug in its field checks; the record
    that makes it raise is found by bisection over prefixes (the readers are
    deterministic), skipped with its line number, and the rest read again.
    """
    records, numbers = list(lines.records), list(lines.numbers)

    def run(count: int) -> Transcript:
        return reader(records[:count], path=path, line_count=lines.line_count, skipped=lines.skipped)

    for _ in range(MAX_BAD_RECORDS):
        try:
            return run(len(records))
        except Exception as error:
            failing = _first_failing(run, len(records))
            if failing is None:
                raise SessionReadError(path, f"cannot be read ({type(error).__name__})") from error
            lines.skip(f"invalid field ({type(error).__name__})", numbers[failing])
            del records[failing], numbers[failing]
            if not records:
                raise SessionReadError(path, "no readable lines") from error
    raise SessionReadError(path, f"more than {MAX_BAD_RECORDS} lines no reader can take")


def _first_failing(run: Callable[[int], Transcript], count: int) -> int | None:
    """The index of the record whose prefix first makes ``run`` raise (None: even the empty one does)."""
    if _raises(run, 0):
        return None
    low, high = 0, count  # run(low) passes, run(high) raises
    while high - low > 1:
        middle = (low + high) // 2
        if _raises(run, middle):
            high = middle
        else:
            low = middle
    return high - 1


def _raises(run: Callable[[int], Transcript], count: int) -> bool:
    try:
        run(count)
    except Exception:
        return True
    return False


MAX_PATH_CHARS = 4096
MAX_BRANCH_CHARS = 1024
MAX_FIELD_CHARS = 2048


def checked_meta(meta: SessionMeta, path: str) -> tuple[SessionMeta, list[str]]:
    """``meta`` with fields no session could really hold dropped, and a warning for each.

    A cwd must be an absolute path of at most 4,096 characters (a relative
    ``.`` would name no project); a branch at most 1,024; other names 2,048.
    """
    update: dict[str, Any] = {}
    notes: list[str] = []
    cwd = meta.cwd
    if cwd is not None:
        problem = None
        if len(cwd) > MAX_PATH_CHARS:
            problem = f"longer than {MAX_PATH_CHARS} characters"
        elif not cwd.strip():
            problem = "blank"
        elif not (cwd.startswith(("/", "~")) or re.match(r"^[A-Za-z]:[\\/]", cwd)):
            problem = f"not an absolute path ({cwd[:40]!r})"
        if problem:
            update["cwd"] = None
            notes.append(f"{path}: working folder ignored: {problem}")
    limits = {"git_branch": MAX_BRANCH_CHARS, "git_remote": MAX_FIELD_CHARS, "git_commit": MAX_FIELD_CHARS,
              "agent_version": MAX_FIELD_CHARS, "origin": MAX_FIELD_CHARS, "memory_mode": MAX_FIELD_CHARS,
              "native_id": MAX_FIELD_CHARS}
    for name, limit in limits.items():
        value = getattr(meta, name)
        if isinstance(value, str) and len(value) > limit:
            if name == "native_id":
                update[name] = "sha256-" + hashlib.sha256(value.encode()).hexdigest()
            else:
                update[name] = None
            notes.append(f"{path}: {name.replace('_', ' ')} ignored: longer than {limit} characters")
    return (meta.model_copy(update=update) if update else meta), notes


class SessionFiles:
    """The session source ingest reads: Codex and Claude Code files on disk."""

    def __init__(self, limits: ReadLimits | None = None) -> None:
        self.limits = limits or ReadLimits()

    def discover(self, paths: Sequence[Path]) -> list[SessionFile]:
        """Every session file under ``paths`` (see :func:`discover`)."""
        return discover(paths)

    def content_hash(self, path: Path) -> str:
        """The SHA-256 of the file's raw bytes; raises :class:`SessionReadError`."""
        return content_hash(path, self.limits)

    def read(self, path: Path) -> Transcript:
        """The file's transcript; raises :class:`SessionReadError`."""
        return read_session(path, limits=self.limits)
