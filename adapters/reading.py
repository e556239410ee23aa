"""Citations, as the CLI and the MCP server record them.

(The reads, context, search, show and memory files, are in
``domain.services.read``.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from mnemolog.adapters.bootstrap import Store
from mnemolog.adapters.citations import parse_citation_blocks, parse_citation_entry, parse_item_ids
from mnemolog.adapters.session_files import read_session
from mnemolog.domain.reading import record_citation as record_citation_event
from mnemolog.domain.session import session_id_for
from mnemolog.domain.transcript import ItemKind
from mnemolog.projections.reads import ViewReads
from mnemolog.projections.schema import table

# ------------------------------------------------------------------ citations


@dataclass
class CitationReport:
    """What a cite call found and recorded."""

    citations: int = 0
    item_ids: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    rollout_ids: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    unknown_items: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


FileReader = Callable[[str], "str | None"]


def disk_folder_reader(folder: Path) -> FileReader:
    """Reads files of a rendered folder on disk (only inside it)."""
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


def items_in_entries(entries: Sequence[str], read: FileReader | None) -> list[str]:
    """Item ids on the memory-file lines that citation entries name (``MEMORY.md:12-14``)."""
    if read is None:
        return []
    found: list[str] = []
    cache: dict[str, list[str] | None] = {}
    for raw in entries:
        entry = parse_citation_entry(raw)
        if entry is None or entry.line_start is None:
            continue
        if entry.path not in cache:
            text = read(entry.path)
            cache[entry.path] = text.splitlines() if text is not None else None
        lines = cache[entry.path]
        if not lines:
            continue
        chosen = lines[max(entry.line_start, 1) - 1 : entry.line_end or entry.line_start]
        found.extend(parse_item_ids("\n".join(chosen)))
    return list(dict.fromkeys(found))


def _known_items(store: Store, ids: Sequence[str]) -> tuple[list[str], list[str]]:
    if not ids:
        return [], []
    marks = ", ".join("?" for _ in ids)
    rows = ViewReads(store.view).query(f"SELECT id FROM {table('items')} WHERE id IN ({marks})", list(ids))
    known = {r["id"] for r in rows}
    return [i for i in ids if i in known], [i for i in ids if i not in known]


def record_citation(
    store: Store,
    text: str,
    source: str = "cli",
    *,
    citing_session: str | None = None,
    read_file: FileReader | None = None,
    key: str | None = None,
) -> CitationReport:
    """Record one Citation for an agent's output: Codex citation blocks and ``[item:<id>]`` markers.

    Rollout (and legacy thread) ids become session ids; citation entries that
    name lines of a memory file cite the items on those lines (when
    ``read_file`` can read the file the agent saw). Unknown item ids are
    reported, not recorded.
    """
    store.catch_up()
    refs = parse_citation_blocks(text)
    rollout_ids = list(dict.fromkeys(r for ref in refs for r in ref.rollout_ids))
    entries = list(dict.fromkeys(e for ref in refs for e in ref.entries))
    cited = list(dict.fromkeys([*parse_item_ids(text), *items_in_entries(entries, read_file)]))
    known, unknown = _known_items(store, cited)
    session_ids = [session_id_for("codex", rid) for rid in rollout_ids]
    report = CitationReport(
        item_ids=known,
        session_ids=[str(s) for s in session_ids],
        rollout_ids=rollout_ids,
        entries=entries,
        unknown_items=unknown,
    )
    recorded = record_citation_event(
        store.app,
        item_ids=[UUID(i) for i in known],
        session_ids=session_ids,
        cited_at=store.clock(),
        source=source,
        citing_session=citing_session,
        entries=entries,
        key=key,
    )
    report.citations = 1 if recorded else 0
    store.catch_up()
    return report


def cite_session_file(store: Store, path: Path, read_file: FileReader | None = None) -> CitationReport:
    """Record the citations inside a recorded session file (Codex rollout or Claude Code transcript).

    Each citation is keyed by the session and its position, the way ingest keys
    them, so citing a file again, or after ingest, counts nothing twice.
    """
    transcript = read_session(path)
    meta = transcript.meta
    report = CitationReport()
    for index, ref in enumerate(transcript.citations):
        key = f"ingest:{meta.source}:{meta.native_id}:{index}"
        session_ids = [session_id_for("codex", rid) for rid in ref.rollout_ids]
        cited = items_in_entries(ref.entries, read_file)
        known, unknown = _known_items(store, cited)
        if record_citation_event(
            store.app, item_ids=[UUID(i) for i in known], session_ids=session_ids,
            cited_at=ref.timestamp or meta.updated_at or store.clock(), source="session",
            citing_session=meta.native_id, entries=ref.entries, key=key,
        ):
            report.citations += 1
        report.rollout_ids += list(ref.rollout_ids)
        report.session_ids += [str(s) for s in session_ids]
        report.entries += list(ref.entries)
        report.item_ids += known
        report.unknown_items += unknown
    for index, item in enumerate(transcript.items):
        if item.kind is not ItemKind.ASSISTANT or ("[item:" not in item.text and "oai-mem-citation" not in item.text):
            continue
        sub = record_citation(
            store, item.text, "session", citing_session=meta.native_id, read_file=read_file,
            key=f"session:{meta.source}:{meta.native_id}:{index}",
        )
        report.citations += sub.citations
        report.item_ids += sub.item_ids
        report.session_ids += sub.session_ids
        report.rollout_ids += sub.rollout_ids
        report.entries += sub.entries
        report.unknown_items += sub.unknown_items
    for name in ("item_ids", "session_ids", "rollout_ids", "entries", "unknown_items"):
        setattr(report, name, list(dict.fromkeys(getattr(report, name))))
    store.catch_up()
    return report


