"""Write a rendered memory folder and swap it in whole, never through a symlink.

The files go into a fresh temporary sibling of ``out_dir`` (created with
``mkdtemp``, so nobody else's link can be in it), every file is opened with
``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to an already-open directory and
fsynced; then the old folder is renamed aside, the new one renamed in, the
parent fsynced and the old folder removed. A reader sees either the old
folder or the new one (or, for the instant between the two renames, none).

An ``extensions/`` folder already in ``out_dir`` (Codex users keep ad-hoc
notes there) is moved into the new folder just before the swap. If the
process dies between that move and the swap, the notes are in the
``.<name>.new-*`` sibling, never deleted: the next write moves them back.

Concurrent writers (two ``run``s) swap one at a time under an exclusive lock
on the folder's parent directory. Staging and set-aside folders carry
their writer's host and pid; under the lock, those of a writer that is gone
(killed mid-write) are removed, after giving back any ``extensions/`` they
hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath

from mnemolog.domain import fault_points

EXTENSIONS_DIR = "extensions"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class FolderWriteError(Exception):
    """The folder could not be written safely (a symlink in the way, a bad path, ...)."""


def _check_relative(path: str) -> tuple[str, ...]:
    """The parts of a safe relative path, or FolderWriteError."""
    if not path or "\0" in path or "\\" in path:
        raise FolderWriteError(f"invalid file path in folder: {path!r}")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise FolderWriteError(f"absolute path not allowed in folder: {path!r}")
    parts = tuple(path.split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise FolderWriteError(f"path escapes or is not normalised: {path!r}")
    return parts


def _is_symlink(path: Path) -> bool:
    try:
        return stat.S_ISLNK(path.lstat().st_mode)
    except FileNotFoundError:
        return False


def _ensure_parent(parent: Path) -> None:
    """Create missing ancestors one by one; none we create into may be a symlink."""
    missing: list[Path] = []
    probe = parent
    while not probe.exists() and not _is_symlink(probe):
        missing.append(probe)
        probe = probe.parent
    if _is_symlink(probe) and missing:
        raise FolderWriteError(f"refusing to create folders under a symlink: {probe}")
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        if _is_symlink(folder) or not folder.is_dir():
            raise FolderWriteError(f"not a plain directory: {folder}")
    if _is_symlink(parent):
        raise FolderWriteError(f"refusing to write into a symlinked folder: {parent}")
    if not parent.is_dir():
        raise FolderWriteError(f"parent is not a directory: {parent}")


@contextlib.contextmanager
def _open_dir(path: str | Path, dir_fd: int | None = None) -> Iterator[int]:
    fd = os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def _write_file(root_fd: int, parts: tuple[str, ...], text: str | Iterable[str]) -> None:
    """Create ``parts`` under ``root_fd``, walking directory fds without following links; ``text`` whole or in pieces."""
    fds: list[int] = []
    try:
        current = root_fd
        for name in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=current)
            current = os.open(name, _DIR_FLAGS, dir_fd=current)
            fds.append(current)
        fd = os.open(parts[-1], _FILE_FLAGS, 0o644, dir_fd=current)
        with os.fdopen(fd, "wb") as handle:
            for piece in (text,) if isinstance(text, str) else text:
                handle.write(piece.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.fsync(current)
    finally:
        for fd in fds:
            os.close(fd)


def _fsync_dir(path: Path) -> None:
    with _open_dir(path) as fd:
        os.fsync(fd)


def write_folder(files: Mapping[str, str | Iterable[str]], out_dir: Path) -> None:
    """Write ``files`` (relative path -> text, or its pieces in turn) as the folder ``out_dir``, swapped in whole.

    A file given as pieces (a generator) is written as they come, never held whole.

    Raises FolderWriteError if ``out_dir`` or a folder we create into is a
    symlink, if ``out_dir`` exists but is not a directory, or if a path in
    ``files`` is absolute, contains ``..`` or is otherwise not normalised.
    An existing ``out_dir/extensions/`` is kept; everything else in the old
    folder is replaced.
    """
    checked = {path: _check_relative(path) for path in sorted(files)}
    out_dir = Path(os.path.abspath(out_dir))
    if _is_symlink(out_dir):
        raise FolderWriteError(f"refusing to replace a symlink: {out_dir}")
    if out_dir.exists() and not out_dir.is_dir():
        raise FolderWriteError(f"not a directory: {out_dir}")
    old_extensions = out_dir / EXTENSIONS_DIR
    keep_extensions = out_dir.exists() and (old_extensions.exists() or _is_symlink(old_extensions))
    if keep_extensions and any(parts[0] == EXTENSIONS_DIR for parts in checked.values()):
        raise FolderWriteError("the rendered files may not overwrite the existing extensions/")
    parent = out_dir.parent
    _ensure_parent(parent)

    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.new-{_owner()}-", dir=parent))
    moved_extensions = False
    try:
        with _open_dir(staging) as root_fd:
            for path, parts in checked.items():
                _write_file(root_fd, parts, files[path])
            os.fsync(root_fd)
        fault_points.reached("staging")
        with _swap_lock(out_dir):
            _clean_leftovers(out_dir)
            if out_dir.exists() and not out_dir.is_dir():
                raise FolderWriteError(f"not a directory: {out_dir}")
            old_extensions = out_dir / EXTENSIONS_DIR
            if out_dir.exists() and (old_extensions.exists() or _is_symlink(old_extensions)):
                if any(parts[0] == EXTENSIONS_DIR for parts in checked.values()):
                    raise FolderWriteError("the rendered files may not overwrite the existing extensions/")
                os.rename(old_extensions, staging / EXTENSIONS_DIR)
                moved_extensions = True
            _swap(staging, out_dir)
    except BaseException:
        if moved_extensions and out_dir.is_dir() and not (out_dir / EXTENSIONS_DIR).exists():
            with contextlib.suppress(OSError):
                os.rename(staging / EXTENSIONS_DIR, old_extensions)
                moved_extensions = False
        if staging.exists() and not moved_extensions:
            shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap(staging: Path, out_dir: Path) -> None:
    """Rename the old folder aside, the new one in, then remove the old one."""
    parent = out_dir.parent
    if not out_dir.exists():
        os.rename(staging, out_dir)
        _fsync_dir(parent)
        return
    aside = parent / f".{out_dir.name}.old-{_owner()}-{secrets.token_hex(6)}"
    os.rename(out_dir, aside)
    fault_points.reached("aside")
    try:
        os.rename(staging, out_dir)
    except OSError:
        os.rename(aside, out_dir)
        raise
    _fsync_dir(parent)
    shutil.rmtree(aside, ignore_errors=True)


def _owner() -> str:
    """This writer, as staging and set-aside folders name it: host and pid."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"
    return f"{host}-{os.getpid()}"


@contextlib.contextmanager
def _swap_lock(out_dir: Path) -> Iterator[None]:
    """An exclusive lock on the folder's parent directory (no lock file left behind; freed when the holder dies)."""
    with _open_dir(out_dir.parent) as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<what>new|old)-(?P<host>[A-Za-z0-9._-]+?)-(?P<pid>\d+)-")


def _writer_gone(host: str, pid: int) -> bool:
    if host != _owner().rsplit("-", 1)[0]:
        return False  # another machine's writer: not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def _clean_leftovers(out_dir: Path) -> None:
    """Remove the staging and set-aside folders of writers that are gone (called under the swap lock).

    A staging folder holding the user's ``extensions/`` (the writer died
    between moving it and the swap) gives it back to ``out_dir`` first, or is
    kept when ``out_dir`` already has one.
    """
    parent = out_dir.parent
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        found = _LEFTOVER.match(name)
        if found is None or found["name"] != out_dir.name or not _writer_gone(found["host"], int(found["pid"])):
            continue
        leftover = parent / name
        if _is_symlink(leftover) or not leftover.is_dir():
            continue
        if found["what"] == "old" and not out_dir.exists():
            os.rename(leftover, out_dir)  # died between the two renames: the old folder goes back
            continue
        extensions = leftover / EXTENSIONS_DIR
        if extensions.exists() or _is_symlink(extensions):
            if not out_dir.is_dir() or (out_dir / EXTENSIONS_DIR).exists():
                continue  # nowhere to give the notes back to: keep them
            os.rename(extensions, out_dir / EXTENSIONS_DIR)
        shutil.rmtree(leftover, ignore_errors=True)
