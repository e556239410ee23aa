"""Citing memory: an agent used items and sessions, which feeds the usage ranks.

A citation is one ``Citation`` event; the usage ranks are its projection. What
was cited is read from the agent's output: Codex ``<oai-mem-citation>`` blocks
(rollout ids, and entries naming lines of a memory file, whose items are cited
when the file can be read) and ``[item:<id>]`` markers. Unknown item ids are
reported, not recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from mnemolog.domain.citation import Citation
from mnemolog.domain.citation_parsing import (
    parse_citation_blocks,
    parse_citation_entry,
    parse_item_ids,
    skill_file,
)
from mnemolog.domain.services.unit_of_work import UnitOfWork
from mnemolog.domain.session import session_id_for
from mnemolog.domain.transcript import ItemKind, Transcript

CITATION_SOURCES = ("cli", "ingest", "mcp", "session")

FileReader = Callable[[str], "str | None"]
"""Reads a file of the memory folder the agent saw, by its path in the folder (None when it cannot)."""


@dataclass
class CitationReport:
    """What a cite call found and recorded."""

    citations: int = 0  # Citation events written
    item_ids: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    rollout_ids: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    unknown_items: list[str] = field(default_factory=list)

    def add(self, other: CitationReport) -> None:
        """Count ``other`` in (lists stay free of duplicates)."""
        self.citations += other.citations
        for name in ("item_ids", "session_ids", "rollout_ids", "entries", "unknown_items"):
            setattr(self, name, list(dict.fromkeys([*getattr(self, name), *getattr(other, name)])))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "citations": self.citations,
            "item_ids": list(self.item_ids),
            "session_ids": list(self.session_ids),
            "rollout_ids": list(self.rollout_ids),
            "entries": list(self.entries),
            "unknown_items": list(self.unknown_items),
        }


def save_citation(
    uow: UnitOfWork,
    *,
    item_ids: Sequence[UUID],
    session_ids: Sequence[UUID],
    source: str,
    cited_at: datetime | None = None,
    citing_session: str | None = None,
    entries: Sequence[str] = (),
    key: str | None = None,
) -> UUID | None:
    """Append one ``Citation``; its id, or None when it cites nothing or ``key`` was already recorded.

    ``key`` makes the command idempotent: the same citation read twice (a
    session file cited again, or cited and ingested) is recorded once.
    Raises ValueError for an unknown source.
    """
    if source not in CITATION_SOURCES:
        raise ValueError(f"unknown citation source {source!r} (expected one of {', '.join(CITATION_SOURCES)})")
    items = tuple(dict.fromkeys(item_ids))
    sessions = tuple(dict.fromkeys(session_ids))
    if not items and not sessions and not entries:
        return None
    app = uow.app
    if key is not None and app.find(Citation.create_id(key=key)) is not None:
        return None
    citation = Citation(
        item_ids=items,
        session_ids=sessions,
        citing_session=citing_session,
        cited_at=cited_at or uow.clock(),
        source=source,
        entries=tuple(entries),
        key=key,
    )
    app.save_all(citation)
    citation_id: UUID = citation.id
    return citation_id


def _items_in_entries(entries: Sequence[str], read: FileReader | None) -> list[str]:
    """Item ids on the memory-file lines that citation entries name (``MEMORY.md:12-14``), and the
    skills whose file an entry names (``skills/<name>/SKILL.md``, lines or not)."""
    if read is None:
        return []
    found: list[str] = []
    cache: dict[str, list[str] | None] = {}
    for raw in entries:
        entry = parse_citation_entry(raw)
        if entry is None:
            continue
        skill = skill_file(entry.path)
        if entry.line_start is None and skill is None:
            continue
        path = skill or entry.path
        if path not in cache:
            text = read(path)
            cache[path] = text.splitlines() if text is not None else None
        lines = cache[path]
        if not lines:
            continue
        if skill is not None:  # a skill is one file: any of its lines is a use of the skill
            found.extend(parse_item_ids("\n".join(lines)))
            continue
        assert entry.line_start is not None
        chosen = lines[max(entry.line_start, 1) - 1 : entry.line_end or entry.line_start]
        found.extend(parse_item_ids("\n".join(chosen)))
    return list(dict.fromkeys(found))


def _known(uow: UnitOfWork, ids: Sequence[str], project: str | None = None) -> tuple[list[str], list[str]]:
    """The cited item ids that exist (in ``project`` or global, when given), and the others (in the order cited)."""
    if not ids:
        return [], []
    reads = uow.reads()
    known = reads.known_item_ids(ids)
    if project is not None:  # another project's item is unknown to this one, as ``show`` has it
        known = {i for i in known if reads.item(UUID(i), project) is not None}
    return [i for i in ids if i in known], [i for i in ids if i not in known]


def record_citation(
    uow: UnitOfWork,
    text: str,
    source: str = "cli",
    *,
    citing_session: str | None = None,
    read_file: FileReader | None = None,
    key: str | None = None,
    project: str | None = None,
) -> CitationReport:
    """Record one citation for an agent's output: its Codex citation blocks and ``[item:<id>]`` markers.

    Rollout (and legacy thread) ids become session ids; citation entries that
    name lines of a memory file cite the items on those lines (when
    ``read_file`` can read the file the agent saw). With ``project``, items of
    other projects are reported unknown and not recorded.
    """
    refs = parse_citation_blocks(text)
    rollout_ids = list(dict.fromkeys(r for ref in refs for r in ref.rollout_ids))
    entries = list(dict.fromkeys(e for ref in refs for e in ref.entries))
    cited = list(dict.fromkeys([*parse_item_ids(text), *_items_in_entries(entries, read_file)]))
    known, unknown = _known(uow, cited, project)
    session_ids = [session_id_for("codex", rid) for rid in rollout_ids]
    recorded = save_citation(
        uow,
        item_ids=[UUID(i) for i in known],
        session_ids=session_ids,
        source=source,
        citing_session=citing_session,
        entries=entries,
        key=key,
    )
    return CitationReport(
        citations=1 if recorded else 0,
        item_ids=known,
        session_ids=[str(s) for s in session_ids],
        rollout_ids=rollout_ids,
        entries=entries,
        unknown_items=unknown,
    )


def cite_session_file(
    uow: UnitOfWork, transcript: Transcript, read_file: FileReader | None = None, project: str | None = None
) -> CitationReport:
    """Record the citations inside a recorded session (a Codex rollout or a Claude Code transcript, as read).

    The citations its reader found (Codex's structured ones) and those in the
    assistant's messages. Each is keyed by the session and its position, the
    way ingest keys them, so citing a file again, or after ingest, counts
    nothing twice.
    """
    meta = transcript.meta
    report = CitationReport()
    for index, ref in enumerate(transcript.citations):
        session_ids = [session_id_for("codex", rid) for rid in ref.rollout_ids]
        known, unknown = _known(uow, _items_in_entries(ref.entries, read_file), project)
        recorded = save_citation(
            uow,
            item_ids=[UUID(i) for i in known],
            session_ids=session_ids,
            source="session",
            cited_at=ref.timestamp or meta.updated_at,
            citing_session=meta.native_id,
            entries=ref.entries,
            key=f"ingest:{meta.source}:{meta.native_id}:{index}",
        )
        report.add(
            CitationReport(
                citations=1 if recorded else 0,
                item_ids=known,
                session_ids=[str(s) for s in session_ids],
                rollout_ids=list(ref.rollout_ids),
                entries=list(ref.entries),
                unknown_items=unknown,
            )
        )
    for index, item in enumerate(transcript.items):
        if item.kind is not ItemKind.ASSISTANT or ("[item:" not in item.text and "oai-mem-citation" not in item.text):
            continue
        report.add(
            record_citation(
                uow,
                item.text,
                "session",
                citing_session=meta.native_id,
                read_file=read_file,
                key=f"session:{meta.source}:{meta.native_id}:{index}",
                project=project,
            )
        )
    return report
