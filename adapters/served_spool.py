"""The servings the log would not take when they were made (another process held its write lock), kept as files.

Each kept serving is one JSON file named by the serving's id in
``<home>/served-spool/``, written whole (a temporary file renamed into place),
so a reader never sees half of one. The next store session records them
(``domain.services.injections.record_kept``) and deletes each file once the log
holds it: the injection log loses no serving and holds each once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SPOOL_FOLDER = "served-spool"


class ServedSpool:
    """The kept servings in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def keep(self, record: dict[str, Any]) -> None:
        """Keep ``record`` (its ``id`` names the file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{record['id']}.json"
        temporary = self.folder / f".{name}.{os.getpid()}"
        temporary.write_text(json.dumps(record), encoding="utf-8")
        os.replace(temporary, self.folder / name)

    def kept(self) -> list[tuple[str, dict[str, Any]]]:
        """Every kept serving, oldest first: (file name, record); unreadable files are left alone."""
        try:
            files = sorted((entry for entry in os.scandir(self.folder) if entry.name.endswith(".json") and not entry.name.startswith(".")), key=lambda e: e.stat().st_mtime_ns)
        except OSError:  # no folder: nothing kept (the usual case, one failed call)
            return []
        out = []
        for entry in files:
            try:
                record = json.loads(Path(entry.path).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(record, dict):
                out.append((entry.name, record))
        return out

    def forget(self, name: str) -> None:
        """Delete a kept serving (the log holds it)."""
        (self.folder / name).unlink(missing_ok=True)
