"""Codex's ad-hoc notes folder (``extensions/ad_hoc/notes/*.md`` in a memory folder), read for the notes service."""

from __future__ import annotations

from pathlib import Path

from mnemolog.domain.services.notes import NoteFile

NOTES_DIR = "extensions/ad_hoc/notes"


class NoteFolder:
    """The notes files under one memory folder; a file that is not a regular file is never read."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def note_files(self) -> list[NoteFile]:
        """Every ``*.md`` file of the notes folder, by name (empty when there is none)."""
        notes_dir = self.folder / NOTES_DIR
        if not notes_dir.is_dir():
            return []
        found: list[NoteFile] = []
        for path in sorted(notes_dir.glob("*.md")):
            source = f"{NOTES_DIR}/{path.name}"
            if path.is_symlink() or not path.is_file():
                found.append(NoteFile(source, None, "not a regular file"))
                continue
            try:
                found.append(NoteFile(source, path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as error:
                found.append(NoteFile(source, None, f"unreadable: {error}"))
        return found
