"""Reading the rendered memory folder on disk (for citations that name its lines)."""

from __future__ import annotations

from pathlib import Path

from mnemolog.domain.services.cite import FileReader


def disk_folder_reader(folder: Path) -> FileReader:
    """Reads files of a rendered folder on disk, only inside it (no symlink or ``..`` out of it)."""
    root = folder.resolve()

    def read(rel: str) -> str | None:
        target = (root / rel).resolve()
        if root not in target.parents or not target.is_file():
            return None
        try:
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read
