"""Commands of the read path: an agent cited memory, a user left a note.

Both append one event and nothing else; the usage ranks and the notes table
are projections of those events.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.citation import Citation
from mnemolog.domain.note import Note

NOTE_INTENTS = ("remember", "correct")
CITATION_SOURCES = ("cli", "ingest", "mcp", "session")


def record_citation(
    app: MnemologApp,
    *,
    item_ids: Sequence[UUID],
    session_ids: Sequence[UUID],
    cited_at: datetime,
    source: str,
    citing_session: str | None = None,
    entries: Sequence[str] = (),
    key: str | None = None,
) -> UUID | None:
    """Record one citation; returns its id, or None when it cites nothing or ``key`` was already recorded.

    ``key`` makes the command idempotent: the same citation read twice (a
    session file cited again) is recorded once.
    """
    items = tuple(dict.fromkeys(item_ids))
    sessions = tuple(dict.fromkeys(session_ids))
    if not items and not sessions and not entries:
        return None
    if key is not None and app.find(Citation.create_id(key=key)) is not None:
        return None
    citation = Citation(
        item_ids=items,
        session_ids=sessions,
        citing_session=citing_session,
        cited_at=cited_at,
        source=source,
        entries=tuple(entries),
        key=key,
    )
    app.save_all(citation)
    citation_id: UUID = citation.id
    return citation_id


def record_note(
    app: MnemologApp, *, text: str, intent: str, scope: str, source: str, written_at: datetime
) -> UUID:
    """Append a note for the next consolidation. Raises ValueError for an empty text or an unknown intent.

    Forget requests are not notes: they place a tombstone (see ``domain.forget``),
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
