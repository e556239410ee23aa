"""Read-side queries over the projection tables (both backends)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from mnemolog.domain.evidence_spans import EvidenceSpan
from mnemolog.domain.item_kinds import GLOBAL_SCOPE
from mnemolog.domain.reads import (
    ID_KINDS,
    CitationRow,
    EvidenceSession,
    InjectionRow,
    ItemRow,
    NoteRow,
    RunRow,
    SearchHit,
    SelectedSession,
    SessionState,
    SessionTexts,
    TombstoneRow,
    ViewCounts,
)
from mnemolog.domain.skill import Skill
from mnemolog.domain.tombstone_matcher import TombstoneRule
from mnemolog.projections.folder_model import FolderModel, FolderSession
from mnemolog.projections.schema import table
from mnemolog.projections.search import search_rows
from mnemolog.projections.sql import Sql
from mnemolog.projections.view_rows import UNLISTED_RANK
from mnemolog.projections.view_store import MemoryView

if TYPE_CHECKING:  # phase 2's types: their modules load the Consolidation aggregate
    from mnemolog.domain.consolidation import SelectedInput
    from mnemolog.domain.selection import Candidate

LIVE = "deleted = 0 AND pruned = 0 AND mode = 'enabled' AND extraction_status = 'extracted'"


def when(value: str | None) -> datetime | None:
    """Parse an ISO time column."""
    return datetime.fromisoformat(value) if value else None


def scope_filter(project: str | None, column: str = "scope") -> tuple[str, list[Any]]:
    """SQL condition for "this project or global" (no condition when project is None)."""
    if project is None:
        return "1 = 1", []
    return f"{column} IN (?, 'global')", [project]


def json_list(value: str | None) -> list[Any]:
    """A JSON list column (``[]`` and NULL without parsing: most rows hold no evidence or spans)."""
    return json.loads(value) if value and value != "[]" else []


def _shown(r: dict[str, Any]) -> dict[str, Any]:
    """An items row's columns that its context and summary lines show, as ItemRow fields."""
    return {
        "item_id": UUID(r["id"]),
        "kind": r["kind"],
        "scope": r["scope"],
        "task_group": r["task_group"] or "",
        "title": r["title"] or "",
        "text": r["text"] or "",
        "keywords": tuple(json_list(r["keywords"])),
        "trust": r["trust"],
        "use_count": int(r.get("use_count") or 0),
        "pinned": bool(r.get("pinned") or 0),
        "skill": Skill.model_validate_json(r["skill"]) if r.get("skill") else None,
    }


def shown_item_row(r: dict[str, Any]) -> ItemRow:
    """An ItemRow of only what an item's lines show: no times, evidence or spans parsed (a rebuild counts every item's lines)."""
    return ItemRow(**_shown(r), evidence=())


def item_row(r: dict[str, Any]) -> ItemRow:
    """The one mapper from an items row (with ``use_count`` and ``last_used`` when joined) to an ItemRow."""
    return ItemRow(
        **_shown(r),
        evidence=tuple(UUID(e) for e in json_list(r["evidence"])),
        status=r["status"],
        valid_from=when(r["valid_from"]),
        valid_to=when(r["valid_to"]),
        created_at=when(r["created_at"]),
        updated_at=when(r["updated_at"]),
        revision=int(r["revision"] or 1),
        last_used=when(r.get("last_used")),
        edited_by_user=bool(r.get("edited_by_user") or 0),
        served_count=int(r.get("served_count") or 0),
        last_served=when(r.get("last_served")),
        context_tokens=r.get("context_tokens"),
        summary_tokens=r.get("summary_tokens"),
        spans=tuple(EvidenceSpan.model_validate(s) for s in json_list(r.get("spans"))),
    )


def note_row(r: dict[str, Any]) -> NoteRow:
    """A notes row as the read port's note type."""
    return NoteRow(
        note_id=UUID(r["id"]),
        intent=r["intent"],
        scope=r["scope"],
        text=r["text"] or "",
        source=r["source"] or "",
        written_at=when(r["written_at"]),
        applied_by=UUID(r["applied_by"]) if r["applied_by"] else None,
        withdrawn=bool(r["withdrawn"]),
    )


def session_state(r: dict[str, Any]) -> SessionState:
    """A sessions row as the read port's phase-1 state."""
    answered = r["extraction_status"] in ("extracted", "nothing")
    return SessionState(
        session_id=UUID(r["id"]),
        source=r["source"] or "",
        native_id=r["native_id"] or "",
        scope=r["scope"] or "",
        cwd=r["cwd"] or "",
        updated_at=when(r["updated_at"]) or when(r["recorded_at"]),
        interactive=bool(r["interactive"]),
        user_messages=int(r["user_message_count"] or 0),
        mode=r["mode"] or "enabled",
        eligible=None if r["eligible"] is None else bool(r["eligible"]),
        eligibility_reasons=tuple(json.loads(r["eligibility_reasons"] or "[]")),
        extraction_status=r["extraction_status"] or "none",
        current=answered and r["extracted_hash"] == r["content_hash"],
        attempts=int(r["attempts"] or 0),
        retry_after=when(r["retry_after"]),
        last_error=r["last_error"],
        extracted_at=when(r["extracted_at"]),
        pruned=bool(r["pruned"]),
        deleted=bool(r["deleted"]),
    )


_PREFIX_TABLES = {"items": "items", "sessions": "sessions", "notes": "notes", "tombstones": "tombstones", "runs": "consolidations"}


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


_WITH_USAGE = (
    f"SELECT i.*, u.use_count, u.last_used, v.served_count, v.last_served FROM {table('items')} i "
    f"LEFT JOIN {table('item_usage')} u ON u.item_id = i.id LEFT JOIN {table('item_serving')} v ON v.item_id = i.id"
)


class ViewReads:
    """The read port (``domain.reads.MemoryReads``) over the view tables; each query is one short read transaction."""

    def __init__(self, view: MemoryView) -> None:
        self.view = view

    def query(self, statement: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Run one SELECT."""
        with self.view.reading() as sql:
            return sql.rows(statement, params)

    # sessions -----------------------------------------------------------------
    def known_files(self) -> dict[str, str]:
        """Content hash by file path of every session not deleted (ingest skips unchanged bytes)."""
        rows = self.query(f"SELECT path, content_hash FROM {table('sessions')} WHERE deleted = 0")
        return {r["path"]: r["content_hash"] for r in rows}

    def sessions_to_reassess(self) -> list[UUID]:
        """Sessions whose eligibility may change with time (not yet eligible, not deleted)."""
        rows = self.query(f"SELECT id FROM {table('sessions')} WHERE deleted = 0 AND (eligible = 0 OR eligible IS NULL) ORDER BY id")
        return [UUID(r["id"]) for r in rows]

    def sessions_to_extract(self, now: datetime, limit: int | None = None) -> list[UUID]:
        """Eligible, enabled sessions whose current content has no answer yet and may be tried now."""
        rows = self.query(
            f"SELECT id, retry_after FROM {table('sessions')} WHERE deleted = 0 AND mode = 'enabled' AND eligible = 1 "
            "AND (extracted_hash IS NULL OR extracted_hash <> content_hash) AND extraction_status <> 'failed' "
            "ORDER BY updated_at DESC, id"
        )
        rows = [r for r in rows if r["retry_after"] is None or datetime.fromisoformat(r["retry_after"]) <= now]
        ids = [UUID(r["id"]) for r in rows]
        return ids[:limit] if limit is not None else ids

    def candidates(self) -> list[Candidate]:
        """Sessions with a current extraction, with their usage ranks."""
        from mnemolog.domain.selection import Candidate

        rows = self.query(
            f"SELECT s.id, s.extracted_hash, s.updated_at, s.recorded_at, u.use_count, u.last_used "
            f"FROM {table('sessions')} s LEFT JOIN {table('session_usage')} u ON u.session_id = s.id WHERE {LIVE}"
        )
        return [
            Candidate(
                session_id=UUID(r["id"]),
                content_hash=r["extracted_hash"],
                source_time=when(r["updated_at"]) or when(r["recorded_at"]),  # type: ignore[arg-type]
                use_count=int(r["use_count"] or 0),
                last_used=when(r["last_used"]),
                imported_at=when(r["recorded_at"]),
            )
            for r in rows
        ]

    def selected_sessions(self, ids: Sequence[UUID]) -> dict[UUID, SelectedSession]:
        """Content of the given sessions."""
        wanted = {str(i) for i in ids}
        rows = self.query(f"SELECT id, scope, cwd, updated_at, rollout_summary, raw_memory FROM {table('sessions')} WHERE {LIVE}")
        return {
            UUID(r["id"]): SelectedSession(
                UUID(r["id"]), r["scope"], r["cwd"] or "", when(r["updated_at"]), r["rollout_summary"] or "", r["raw_memory"] or ""
            )
            for r in rows
            if r["id"] in wanted
        }

    def live_session_ids(self) -> frozenset[UUID]:
        """Sessions that may be evidence."""
        return frozenset(UUID(r["id"]) for r in self.query(f"SELECT id FROM {table('sessions')} WHERE {LIVE}"))

    def gone_session_ids(self) -> frozenset[UUID]:
        """Sessions that can no longer feed memory (deleted, pruned, disabled, polluted)."""
        rows = self.query(f"SELECT id FROM {table('sessions')} WHERE deleted = 1 OR pruned = 1 OR mode <> 'enabled'")
        return frozenset(UUID(r["id"]) for r in rows)

    def withdrawable_session_ids(self) -> list[UUID]:
        """Sessions neither pruned nor deleted (what a reset withdraws)."""
        rows = self.query(f"SELECT id FROM {table('sessions')} WHERE pruned = 0 AND deleted = 0 ORDER BY id")
        return [UUID(r["id"]) for r in rows]

    def session_texts(self) -> list[SessionTexts]:
        """Every session's stored texts (first message, rollout summary and slug, raw memory, its history excerpts)."""
        rows = self.query(
            "SELECT s.id, s.scope, s.first_user_message, s.rollout_summary, s.rollout_slug, s.raw_memory, s.cwd, s.git_branch, s.path, "
            f"h.text AS history FROM {table('sessions')} s LEFT JOIN {table('history_sessions')} h ON h.session_id = s.id ORDER BY s.id"
        )
        columns = ("first_user_message", "rollout_summary", "rollout_slug", "raw_memory", "cwd", "git_branch", "path", "history")
        return [SessionTexts(UUID(r["id"]), r["scope"], tuple(r[c] for c in columns if r[c])) for r in rows]

    def resolve_session(self, reference: str) -> UUID | None:
        """A session's id from its mnemolog id or its agent's own id; None when unknown or ambiguous."""
        rows = self.query(f"SELECT id FROM {table('sessions')} WHERE id = ? OR native_id = ?", [reference, reference])
        return UUID(rows[0]["id"]) if len(rows) == 1 else None

    def session_states(self, project: str | None = None) -> list[SessionState]:
        """Every session not deleted (of ``project`` only, when given), newest first, with its phase-1 state."""
        cond, params = ("1 = 1", []) if project is None else ("scope = ?", [project])
        rows = self.query(
            f"SELECT * FROM {table('sessions')} WHERE deleted = 0 AND {cond} "
            "ORDER BY COALESCE(updated_at, recorded_at) DESC, id",
            params,
        )
        return [session_state(r) for r in rows]

    # items --------------------------------------------------------------------
    def active_items(self, project: str | None = None) -> list[ItemRow]:
        """Current memory (optionally for one project plus global), by id."""
        cond, params = scope_filter(project, "i.scope")
        rows = self.query(
            f"SELECT i.*, u.use_count, u.last_used FROM {table('items')} i "
            f"LEFT JOIN {table('item_usage')} u ON u.item_id = i.id WHERE i.status = 'active' AND {cond} ORDER BY i.id",
            params,
        )
        return [item_row(r) for r in rows]

    def known_item_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these item ids exist."""
        if not ids:
            return set()
        marks = ", ".join("?" for _ in ids)
        return {r["id"] for r in self.query(f"SELECT id FROM {table('items')} WHERE id IN ({marks})", list(ids))}

    def context_items(self, project: str, offset: int, limit: int) -> list[ItemRow]:
        """Current, not rejected items of ``project`` and global: pinned; accepted, proposed, doubted; most used, newest first.

        Each scope is read in rank order from the ``items_context`` index, at
        most ``offset + limit`` rows each, and the two are merged: the work
        grows with the page asked for, not with the store.
        """
        order = "pinned DESC, context_rank, use_count DESC, updated_at DESC, id"
        each = (
            f"SELECT * FROM (SELECT * FROM {table('items')} WHERE scope = ? AND status = 'active' AND context_rank < {UNLISTED_RANK} "
            f"ORDER BY {order} LIMIT ?) AS s{{n}}"
        )
        rows = self.query(
            f"SELECT i.*, u.last_used FROM ({each.format(n=1)} UNION ALL {each.format(n=2)}) AS i "
            f"LEFT JOIN {table('item_usage')} u ON u.item_id = i.id ORDER BY {order} LIMIT ? OFFSET ?",
            [project, offset + limit, GLOBAL_SCOPE, offset + limit, limit, offset],
        )
        return [item_row(r) for r in rows]

    def context_count(self, project: str) -> int:
        """How many items ``context_items`` would list for ``project`` in all (kept per scope by the views)."""
        scopes = [project] if project == GLOBAL_SCOPE else [project, GLOBAL_SCOPE]
        marks = ", ".join("?" for _ in scopes)
        rows = self.query(f"SELECT COALESCE(SUM(n), 0) AS n FROM {table('context_counts')} WHERE scope IN ({marks})", scopes)
        return int(rows[0]["n"])

    def item(self, item_id: UUID, project: str) -> ItemRow | None:
        """One item of ``project`` or global, whatever its status."""
        rows = self.query(f"{_WITH_USAGE} WHERE i.id = ? AND i.scope IN (?, ?)", [str(item_id), project, GLOBAL_SCOPE])
        return item_row(rows[0]) if rows else None

    def evidence_of(self, item_id: UUID) -> list[EvidenceSession]:
        """The recorded sessions an item names as evidence, oldest first."""
        rows = self.query(
            f"SELECT s.id, s.source, s.native_id, s.cwd, s.scope, s.updated_at, s.rollout_summary, s.path "
            f"FROM {table('item_evidence')} e JOIN {table('sessions')} s ON s.id = e.session_id "
            f"WHERE e.item_id = ? ORDER BY s.updated_at, s.id",
            [str(item_id)],
        )
        return [
            EvidenceSession(
                UUID(r["id"]), r["source"], r["native_id"], r["cwd"] or "", r["scope"], when(r["updated_at"]), r["rollout_summary"] or "",
                r["path"] or "",
            )
            for r in rows
        ]

    def list_items(
        self,
        project: str | None = None,
        *,
        kind: str | None = None,
        trust: str | None = None,
        status: str | None = None,
        text: str | None = None,
        limit: int = 200,
    ) -> list[ItemRow]:
        """Items of ``project`` and global (every scope when None), pinned first, then the most recently updated."""
        cond, params = scope_filter(project, "i.scope")
        for column, value in (("i.kind", kind), ("i.trust", trust), ("i.status", status)):
            if value is not None:
                cond += f" AND {column} = ?"
                params.append(value)
        if text:
            cond += " AND (LOWER(i.title) LIKE ? ESCAPE '\\' OR LOWER(i.text) LIKE ? ESCAPE '\\')"
            needle = f"%{_like_escaped(text.lower())}%"
            params += [needle, needle]
        rows = self.query(
            f"{_WITH_USAGE} WHERE {cond} ORDER BY COALESCE(i.pinned, 0) DESC, i.updated_at DESC, i.id LIMIT ?", [*params, limit]
        )
        return [item_row(r) for r in rows]

    def search(self, query: str, project: str | None, kind: str | None, limit: int, any_word: bool = True) -> list[SearchHit]:
        """Current items of ``project`` and global matching the words of ``query``, best first."""
        rows = search_rows(self.view, query, project, kind, limit, any_word)
        return [SearchHit(item_row(r), round(float(r["score"] or 0.0), 6)) for r in rows]

    # notes --------------------------------------------------------------------
    def pending_notes(self) -> list[NoteRow]:
        """Notes no consolidation has applied and nobody withdrew, oldest first."""
        rows = self.query(
            f"SELECT * FROM {table('notes')} WHERE applied_by IS NULL AND withdrawn = 0 ORDER BY written_at, id"
        )
        return [note_row(r) for r in rows]

    def notes(self, project: str | None = None, include_done: bool = True) -> list[NoteRow]:
        """Notes of ``project`` and global ones (every note when None), oldest first; only pending ones unless ``include_done``."""
        cond, params = scope_filter(project)
        pending = "" if include_done else " AND applied_by IS NULL AND withdrawn = 0"
        rows = self.query(f"SELECT * FROM {table('notes')} WHERE {cond}{pending} ORDER BY written_at, id", params)
        return [note_row(r) for r in rows]

    def live_note_ids(self) -> frozenset[UUID]:
        """Notes that may be evidence: every note not withdrawn (applied ones included)."""
        return frozenset(UUID(r["id"]) for r in self.query(f"SELECT id FROM {table('notes')} WHERE withdrawn = 0"))

    def note_ids(self) -> list[UUID]:
        """Every note (forgetting scrubs their texts)."""
        return [UUID(r["id"]) for r in self.query(f"SELECT id FROM {table('notes')} ORDER BY id")]

    def note_sources(self) -> set[str]:
        """Where the notes came from (notes files are imported once each)."""
        return {r["source"] for r in self.query(f"SELECT DISTINCT source FROM {table('notes')}")}

    # consolidations -----------------------------------------------------------
    def last_completed_selection(self) -> tuple[SelectedInput, ...]:
        """The selection of the last completed consolidation."""
        # the aggregate's module: only phase 2 asks
        from mnemolog.domain.consolidation import SelectedInput

        row = self.query(
            f"SELECT selection FROM {table('consolidations')} WHERE status = 'completed' ORDER BY ended_at DESC, id DESC LIMIT 1"
        )
        if not row:
            return ()
        return tuple(SelectedInput.model_validate(s) for s in json.loads(row[0]["selection"]))

    def user_profile(self) -> str:
        """The user profile of the last completed consolidation."""
        row = self.query(
            f"SELECT user_profile FROM {table('consolidations')} WHERE status = 'completed' ORDER BY ended_at DESC, id DESC LIMIT 1"
        )
        return (row[0]["user_profile"] or "") if row else ""

    def profiles(self) -> list[tuple[UUID, str]]:
        """Every run that stored a user profile, with the profile (forgetting scrubs them)."""
        rows = self.query(f"SELECT id, user_profile FROM {table('consolidations')} WHERE user_profile <> '' ORDER BY id")
        return [(UUID(r["id"]), r["user_profile"]) for r in rows]

    def runs(self, limit: int = 50) -> list[RunRow]:
        """The latest consolidation runs, newest first."""
        rows = self.query(f"SELECT * FROM {table('consolidations')} ORDER BY started_at DESC, id LIMIT ?", [limit])
        return [
            RunRow(
                run_id=UUID(r["id"]),
                status=r["status"],
                started_at=when(r["started_at"]),
                ended_at=when(r["ended_at"]),
                model=r["model"] or "",
                added=int(r["added"] or 0),
                revised=int(r["revised"] or 0),
                retired=int(r["retired"] or 0),
                invalidated=int(r["invalidated"] or 0),
                error=r["error"],
            )
            for r in rows
        ]

    # injections and citations ---------------------------------------------------
    def injections(self, session: str) -> list[InjectionRow]:
        """Every serving of memory to ``session``, oldest first."""
        rows = self.query(f"SELECT * FROM {table('injections')} WHERE session = ? ORDER BY served_at, id", [session])
        return [
            InjectionRow(
                UUID(r["id"]), r["session"], r["project"], r["surface"], when(r["served_at"]), int(r["tokens"] or 0),
                tuple(json.loads(r["items"] or "[]")), tuple(json.loads(r["excerpts"] or "[]")),
            )
            for r in rows
        ]

    def citations_by(self, session: str) -> list[CitationRow]:
        """Every citation ``session`` recorded, oldest first."""
        rows = self.query(f"SELECT * FROM {table('citations')} WHERE citing_session = ? ORDER BY cited_at, id", [session])
        return [
            CitationRow(UUID(r["id"]), r["citing_session"], r["source"], when(r["cited_at"]), tuple(UUID(i) for i in json.loads(r["items"] or "[]")))
            for r in rows
        ]

    # tombstones ---------------------------------------------------------------
    def tombstone_rules(self) -> list[TombstoneRule]:
        """Active tombstones."""
        rows = self.query(f"SELECT id, digest, width, scope FROM {table('tombstones')} WHERE lifted = 0 ORDER BY id")
        return [TombstoneRule(UUID(r["id"]), r["digest"], int(r["width"]), r["scope"]) for r in rows]

    def tombstones(self, project: str | None = None) -> list[TombstoneRow]:
        """Every tombstone (of ``project`` and global ones, when given), newest first; never a value."""
        cond, params = scope_filter(project)
        rows = self.query(
            f"SELECT id, scope, reason, placed_at, lifted, suppressions FROM {table('tombstones')} WHERE {cond} "
            "ORDER BY placed_at DESC, id",
            params,
        )
        return [
            TombstoneRow(UUID(r["id"]), r["scope"], r["reason"] or "", when(r["placed_at"]), bool(r["lifted"]), int(r["suppressions"] or 0))
            for r in rows
        ]

    # ids ------------------------------------------------------------------------
    def ids_with_prefix(self, what: str, prefix: str, project: str | None = None, limit: int = 10) -> list[UUID]:
        """Ids of ``what`` starting with ``prefix`` (sessions: or their agent's id), sorted, at most ``limit``."""
        if what not in ID_KINDS:
            raise ValueError(f"unknown id kind {what!r} (expected one of {', '.join(ID_KINDS)})")
        if not prefix or any(c not in "0123456789abcdef-" for c in prefix):
            return []
        like = prefix + "%"
        cond, params = "id LIKE ?", [like]
        if what == "sessions":
            cond, params = "(id LIKE ? OR LOWER(native_id) LIKE ?)", [like, like]
        if project is not None and what in ("items", "tombstones"):
            scoped, extra = scope_filter(project)
            cond, params = f"{cond} AND {scoped}", [*params, *extra]
        rows = self.query(f"SELECT id FROM {table(_PREFIX_TABLES[what])} WHERE {cond} ORDER BY id LIMIT ?", [*params, limit])
        return [UUID(r["id"]) for r in rows]

    # the folder and the whole store -------------------------------------------
    def folder_model(self, project: str | None = None) -> FolderModel:
        """Everything the Markdown folder renders, read from the tables."""
        with self.view.reading() as sql:  # row by row: the rows' dicts are never all held with the items
            items = tuple(self._folder_rows(sql, project))
        return self._folder_without_items(project, items)

    def streamed_folder_model(self, project: str | None = None, kind: str | None = None) -> FolderModel:
        """The folder's model with its items read as the render goes (``folder_items``, ``items_by_ids``), never all held.

        ``kind`` keeps only the items of that kind (the skills alone render from the skills alone).
        """
        return replace(self._folder_without_items(project, ()), source=_FolderItems(self, project, kind))

    def folder_items(self, project: str | None = None, kind: str | None = None) -> Iterator[ItemRow]:
        """The folder's active items (of ``project`` and global ones, when given; of ``kind``), one by one from the cursor."""
        with self.view.reading() as sql:
            yield from self._folder_rows(sql, project, kind)

    def items_by_ids(self, ids: Sequence[str]) -> list[ItemRow]:
        """The items with these ids, in that order (an id with no item is left out)."""
        found: dict[str, ItemRow] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" for _ in chunk)
            with self.view.reading() as sql:
                found.update((r["id"], item_row(r)) for r in sql.each(f"{_WITH_USAGE} WHERE i.id IN ({marks})", chunk))
        return [found[i] for i in ids if i in found]

    @staticmethod
    def _folder_rows(sql: Sql, project: str | None, kind: str | None = None) -> Iterator[ItemRow]:
        cond, params = scope_filter(project, "i.scope")
        if kind is not None:
            cond, params = f"{cond} AND i.kind = ?", [*params, kind]
        return (item_row(r) for r in sql.each(f"{_WITH_USAGE} WHERE i.status = 'active' AND {cond} ORDER BY i.id", params))

    def _folder_without_items(self, project: str | None, items: tuple[ItemRow, ...]) -> FolderModel:
        session_cond = "1 = 1" if project is None else "scope = ?"
        session_rows = self.query(
            f"SELECT * FROM {table('sessions')} WHERE {LIVE} AND {session_cond} ORDER BY native_id",
            [] if project is None else [project],
        )
        sessions = tuple(
            FolderSession(
                session_id=r["id"],
                native_id=r["native_id"],
                source=r["source"],
                path=r["path"],
                cwd=r["cwd"] or "",
                scope=r["scope"],
                git_branch=r["git_branch"],
                started_at=when(r["started_at"]),
                updated_at=when(r["updated_at"]) or when(r["recorded_at"]),  # type: ignore[arg-type]
                rollout_summary=r["rollout_summary"] or "",
                rollout_slug=r["rollout_slug"],
                raw_memory=r["raw_memory"] or "",
            )
            for r in session_rows
        )
        labels = {s.scope: (s.scope.rsplit("/", 1)[-1] or s.scope) for s in sessions}
        return FolderModel(items=items, sessions=sessions, user_profile=self.user_profile(), project=project, scope_labels=labels)

    def counts(self) -> ViewCounts:
        """How much the views hold."""

        def count(name: str, where: str = "1 = 1") -> int:
            return int(self.query(f"SELECT COUNT(*) AS n FROM {table(name)} WHERE {where}")[0]["n"])

        return ViewCounts(
            sessions=count("sessions"),
            items=count("items"),
            active_items=count("items", "status = 'active'"),
            consolidations=count("consolidations"),
            tombstones=count("tombstones"),
            notes=count("notes"),
        )

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every projection table's rows in a stable order (to compare two builds)."""
        from mnemolog.projections.schema import dump_order

        out: dict[str, list[dict[str, Any]]] = {}
        for name, order in dump_order().items():
            cols = "item_id, scope, kind, title, text, keywords" if name == "search_rows" else "*"
            rows = self.query(f"SELECT {cols} FROM {table(name)} ORDER BY {order}")
            for row in rows:  # a count cached for the reader, not state: a view opened without a counter leaves it empty
                row.pop("context_tokens", None)
                row.pop("summary_tokens", None)
            out[name] = rows
        return out


class _FolderItems:
    """The folder's items in the views, as the renderer's ItemSource (``projections.folder_model``)."""

    def __init__(self, reads: ViewReads, project: str | None, kind: str | None = None) -> None:
        self.reads, self.project, self.kind = reads, project, kind

    def each(self) -> Iterator[ItemRow]:
        return self.reads.folder_items(self.project, self.kind)

    def by_ids(self, ids: Sequence[str]) -> list[ItemRow]:
        return self.reads.items_by_ids(ids)
