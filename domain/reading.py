"""A command of the read path: a user left a note.

It appends one event and nothing else; the notes table is its projection.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.note import Note

NOTE_INTENTS = ("remember", "correct")


def record_note(
    app: MnemologApp, *, text: str, intent: str, scope: str, source: str, written_at: datetime
) -> UUID:
    """Append a note for the next consolidation. Raises ValueError for an empty text or an unknown intent.

    Forget requests are not notes: they place a tombstone (see ``domain.services.forget``),
    so the value is never stored.
    """
    if intent not in NOTE_INTENTS:
        raise ValueError(f"unknown note intent {intent!r} (expected one of {', '.join(NOTE_INTENTS)})")
    if not text.strip():
        raise ValueError("a note needs some text")
    note = Note(text=text.strip(), intent=intent, scope=scope, source=source, written_at=written_at)
    app.save_all(note)
    note_id: UUID = note.id
    return note_id
