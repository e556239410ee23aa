"""Notes, as the CLI and the MCP server record them.

(The reads, context, search, show and memory files, are in
``domain.services.read``; citations in ``domain.services.cite``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from mnemolog.adapters.bootstrap import Store, unit_of_work
from mnemolog.adapters.pipeline import matcher_for
from mnemolog.adapters.redaction import redact
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.reading import record_note
from mnemolog.projections.reads import ViewReads
from mnemolog.projections.schema import table

NOTES_DIR = "extensions/ad_hoc/notes"


# ------------------------------------------------------------------ notes


def add_note(store: Store, text: str, intent: str, scope: str, source: str = "cli") -> UUID:
    """Append a remember/correct note (secrets redacted, forgotten values cut out)."""
    clean, _ = redact(text)
    clean = matcher_for(store).scrub(clean, scope)[0]
    note_id: UUID = record_note(store.app, text=clean, intent=intent, scope=scope, source=source, written_at=store.clock())
    store.catch_up()
    return note_id


def forget_via_note(store: Store, text: str, scope: str) -> Any:
    """A forget request: the same tombstone as ``mnemolog forget`` (the text is never stored)."""
    from mnemolog.domain.services.forget import forget_value

    return forget_value(unit_of_work(store), text, scope, "forget requested with `mnemolog note --forget`")


_FRONT_INTENT = re.compile(r"^\s*(?:intent|type|kind)\s*:\s*(\w+)", re.IGNORECASE | re.MULTILINE)
_LEAD_WORD = re.compile(r"^\W*(remember|correct|correction|forget)\b", re.IGNORECASE)


def note_file_intent(text: str) -> str:
    """remember | correct | forget, from front matter (``intent: correct``) or the first word."""
    found = _FRONT_INTENT.search(text[:500]) or _LEAD_WORD.search(text)
    word = found.group(1).lower() if found else "remember"
    return {"correction": "correct"}.get(word, word if word in ("remember", "correct", "forget") else "remember")


@dataclass
class NoteImport:
    """What importing a notes folder did."""

    imported: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


def import_note_files(store: Store, folder: Path, scope: str = GLOBAL_SCOPE) -> NoteImport:
    """Record Codex's ad-hoc note files (``extensions/ad_hoc/notes/*.md`` in ``folder``) as notes, once each.

    A file is known by its path inside the folder. A forget request in a file
    is not stored as a note (that would store the value): it is skipped and
    reported, to be done with ``mnemolog forget``.
    """
    report = NoteImport()
    notes_dir = folder / NOTES_DIR
    if not notes_dir.is_dir():
        return report
    store.catch_up()
    seen = {r["source"] for r in ViewReads(store.view).query(f"SELECT source FROM {table('notes')}")}
    for path in sorted(notes_dir.glob("*.md")):
        rel = f"{NOTES_DIR}/{path.name}"
        if path.is_symlink() or not path.is_file():
            report.skipped.append({"file": rel, "reason": "not a regular file"})
            continue
        if rel in seen:
            report.already.append(rel)
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            report.skipped.append({"file": rel, "reason": f"unreadable: {error}"})
            continue
        intent = note_file_intent(text)
        if intent == "forget":
            report.skipped.append({"file": rel, "reason": "a forget request: run `mnemolog forget` instead"})
            continue
        if not text.strip():
            report.skipped.append({"file": rel, "reason": "empty"})
            continue
        add_note(store, text, intent, scope, source=rel)
        report.imported.append(rel)
    return report
