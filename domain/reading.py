"""Commands of the read path: an agent cited memory.

It appends one event and nothing else; the usage ranks are a projection of
those events. (Notes: ``domain.services.notes``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.citation import Citation

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

