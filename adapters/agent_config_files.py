"""Changing an agent's config files safely: planned edits, a printed diff, backups, and a byte-for-byte undo.

An install is a list of ``FileEdit`` (a file's bytes before and after). It is
applied only after the diff is shown; the first time mnemolog changes a file,
the file's original bytes (or its absence) are kept under
``$MNEMOLOG_HOME/installs/<agent>/``, with a manifest naming every file, the
hash of what mnemolog wrote and what it added (for a surgical undo).

Uninstall restores the original bytes when the file is still what mnemolog
wrote, or when taking mnemolog's entries out of the current file gives back
the original content. When the agent or the user changed the file since (Claude
Code rewrites ``~/.claude.json`` on every start), only mnemolog's entries are
taken out and the rest is left as it is now.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class FileEdit:
    """One file's content before and after (``None``: the file does not exist / is removed)."""

    path: Path
    before: bytes | None
    after: bytes | None

    @property
    def changes(self) -> bool:
        """Whether applying the edit changes anything."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the edit (empty when nothing changes)."""
        if not self.changes:
            return ""
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = (self.after or b"").decode("utf-8", "replace").splitlines(keepends=True)
        label_old = str(self.path) if self.before is not None else "/dev/null"
        label_new = str(self.path) if self.after is not None else "/dev/null"
        lines = list(difflib.unified_diff(old, new, label_old, label_new))
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def read_bytes(path: Path) -> bytes | None:
    """A file's bytes, or ``None`` when it does not exist."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def sha256(data: bytes | None) -> str | None:
    """The hex SHA-256 of ``data`` (``None`` for no file)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def write_atomically(path: Path, data: bytes | None) -> None:
    """Replace ``path`` with ``data`` in one rename (``None`` removes it), keeping its mode."""
    if data is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o600
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".mnemolog")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@dataclass
class Manifest:
    """What one agent's install changed: per file, the backup and the hash of what mnemolog wrote."""

    folder: Path
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # agent-specific (e.g. the Codex hook keys trusted)

    @classmethod
    def load(cls, folder: Path) -> Manifest:
        """The manifest in ``folder`` (empty when there is none)."""
        path = folder / MANIFEST
        if not path.is_file():
            return cls(folder)
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(folder, dict(data.get("files", {})), dict(data.get("extra", {})))

    @property
    def exists(self) -> bool:
        """Whether an install was recorded."""
        return (self.folder / MANIFEST).is_file()

    def save(self) -> None:
        """Write the manifest."""
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"files": self.files, "extra": self.extra}, indent=2, sort_keys=True) + "\n"
        write_atomically(self.folder / MANIFEST, text.encode())

    def original(self, path: Path) -> bytes | None:
        """The bytes ``path`` had before mnemolog first changed it (``None``: it did not exist)."""
        entry = self.files[str(path)]
        if not entry["existed"]:
            return None
        return (self.folder / str(entry["backup"])).read_bytes()

    def record(self, edit: FileEdit) -> None:
        """Keep the original of a file about to change (once), and the hash of what mnemolog writes."""
        key = str(edit.path)
        if key not in self.files:
            backup = f"{len(self.files):02d}-{edit.path.name}"
            if edit.before is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
                write_atomically(self.folder / backup, edit.before)
            self.files[key] = {"existed": edit.before is not None, "backup": backup}
        self.files[key]["written"] = sha256(edit.after)

    def remove(self) -> None:
        """Delete the manifest and the backups (after a complete uninstall)."""
        for entry in self.files.values():
            (self.folder / entry["backup"]).unlink(missing_ok=True)
        (self.folder / MANIFEST).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.folder.rmdir()


def apply(edits: list[FileEdit], manifest: Manifest) -> list[FileEdit]:
    """Back up and write every edit that changes a file; returns those."""
    changed = [edit for edit in edits if edit.changes]
    for edit in changed:
        manifest.record(edit)
        manifest.save()  # the backup is on disk before the file changes
        write_atomically(edit.path, edit.after)
    return changed


def undo_edit(path: Path, manifest: Manifest, strip: Callable[[bytes], bytes | None], same: Callable[[bytes | None, bytes | None], bool]) -> tuple[FileEdit, bool]:
    """The edit that undoes mnemolog's change to ``path``, and whether it restores the original bytes.

    ``strip(current)`` takes mnemolog's entries out of the current content
    (``None``: nothing is left, the file goes); ``same(a, b)`` compares two
    contents as the agent reads them (parsed, not as bytes).
    """
    current = read_bytes(path)
    original = manifest.original(path)
    entry = manifest.files[str(path)]
    if current is None:
        return FileEdit(path, None, original if original is not None else None), original is None
    if sha256(current) == entry.get("written"):
        return FileEdit(path, current, original), True
    stripped = strip(current)
    if same(stripped, original):
        return FileEdit(path, current, original), True
    return FileEdit(path, current, stripped), False
