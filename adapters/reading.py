"""The read path the CLI and the MCP server share: context, search, show, notes.

Every read here is for one project: it returns items scoped to that project or
to the user (``global``), never another project's (guarantee 3), and drops any
item that carries a tombstoned value, whatever the projection holds
(guarantee 1). Session text that is shown is scrubbed the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any
from uuid import UUID

from mnemolog.adapters.bootstrap import Store, unit_of_work
from mnemolog.adapters.pipeline import matcher_for, render_files
from mnemolog.adapters.redaction import redact
from mnemolog.adapters.scope import folder_scope
from mnemolog.adapters.tokens import count_tokens, truncate_to_tokens
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.reading import record_note
from mnemolog.domain.tombstone_matcher import TombstoneMatcher
from mnemolog.projections.reads import ViewReads, when
from mnemolog.projections.schema import table
from mnemolog.projections.search import SearchHit, search_items
from mnemolog.prompts import load_prompt, render

KINDS = ("preference", "knowledge", "failure", "task", "skill")
NOTES_DIR = "extensions/ad_hoc/notes"
PROFILE_MAX_WORDS = 350
ITEM_MAX_WORDS = 60
_PAGE = 500


# ------------------------------------------------------------------ scope


def scope_for_cwd(cwd: str | Path | None = None) -> str:
    """The project scope key of a working folder, as ingest computes it for sessions there."""
    return folder_scope(cwd if cwd is not None else Path.cwd())


def hook_cwd(stdin_text: str) -> str | None:
    """The ``cwd`` of a Claude Code hook's JSON input (None when the input is not that)."""
    try:
        data = json.loads(stdin_text) if stdin_text.strip() else None
    except json.JSONDecodeError:
        return None
    cwd = data.get("cwd") if isinstance(data, dict) else None
    return cwd if isinstance(cwd, str) and cwd.strip() else None


@dataclass(frozen=True)
class _ItemTexts:
    """An item row's texts, as the tombstone matcher reads an item."""

    title: str
    text: str
    keywords: tuple[str, ...]
    task_group: str


def _withheld(matcher: TombstoneMatcher, project: str, title: str, text: str, keywords: Sequence[str], task_group: str) -> bool:
    # Asked in the reading project's scope (the one tombstone rule): that covers
    # global tombstones and the project's own, for its items and global ones alike.
    return matcher.withholds(_ItemTexts(title, text, tuple(keywords), task_group), project)


def _inline(text: str) -> str:
    """One line: whitespace collapsed, no forged item markers."""
    return " ".join(text.replace("[item:", "(item:").split())


def _short(text: str, max_words: int) -> str:
    words = _inline(text).split(" ")
    return " ".join(words) if len(words) <= max_words else " ".join(words[:max_words]) + " …"


# ------------------------------------------------------------------ context


@dataclass(frozen=True)
class Context:
    """What a session receives at start: the text, its token count and the items it shows."""

    text: str
    tokens: int
    budget: int
    project: str
    item_ids: tuple[str, ...]
    more: int  # current items that did not fit


def _context_rows(store: Store, project: str, offset: int) -> list[dict[str, Any]]:
    items, usage = table("items"), table("item_usage")
    rows: list[dict[str, Any]] = ViewReads(store.view).query(
        f"SELECT i.id, i.kind, i.scope, i.task_group, i.title, i.text, i.keywords, i.trust, "
        f"u.use_count FROM {items} i LEFT JOIN {usage} u ON u.item_id = i.id "
        f"WHERE i.status = 'active' AND i.trust <> 'rejected' AND i.scope IN (?, ?) "
        f"ORDER BY CASE i.trust WHEN 'accepted' THEN 0 WHEN 'proposed' THEN 1 ELSE 2 END, "
        f"COALESCE(u.use_count, 0) DESC, i.updated_at DESC, i.id LIMIT ? OFFSET ?",
        [project, GLOBAL_SCOPE, _PAGE, offset],
    )
    return rows


def _context_line(row: dict[str, Any], label: str) -> str:
    title, text = _inline(row["title"] or ""), _short(row["text"] or "", ITEM_MAX_WORDS)
    body = f"{title}: {text}" if title and text and not text.startswith(title) else (text or title)
    notes = ["global" if row["scope"] == GLOBAL_SCOPE else label]
    if row["trust"] != "proposed":
        notes.append(row["trust"])
    uses = int(row["use_count"] or 0)
    if uses:
        notes.append(f"used {uses}x")
    return f"- [{row['kind']}] {body} ({', '.join(notes)}) [item:{row['id']}]"


def project_label(project: str) -> str:
    """A short readable name for a scope key."""
    if project == GLOBAL_SCOPE:
        return "global"
    return project.rsplit("/", 1)[-1] or project


def context_text(store: Store, project: str, budget: int | None = None) -> Context:
    """The read-path instructions and the memory for ``project`` within ``budget`` tokens.

    Items come accepted first, then proposed, then doubted; within that, the
    most used first, then the most recently updated. Whole lines are dropped
    from the end when the budget is reached; the text, counted with the real
    tokenizer, never exceeds the budget.
    """
    store.catch_up()
    limit = store.settings.context_tokens if budget is None else budget
    label = project_label(project)
    matcher = matcher_for(store)
    instructions = render(load_prompt("read_path"), project=f"{label}, scope {project}").rstrip()
    head = [instructions]
    profile = matcher.scrub(ViewReads(store.view).user_profile(), project)[0].strip()
    if profile:
        words = profile.split()
        profile = " ".join(words[:PROFILE_MAX_WORDS]) + (" …" if len(words) > PROFILE_MAX_WORDS else "")
        profile = truncate_to_tokens(profile, max(limit // 5, 0))
        head += ["", "## About the user", "", profile]
    head += ["", f"## Memory for {label} and for you (most trusted and most used first)", ""]
    head_text = "\n".join(head) + "\n"
    used = count_tokens(head_text)
    if used > limit:
        text = truncate_to_tokens(head_text, limit)
        return Context(text, count_tokens(text), limit, project, (), 0)
    reserve = 40  # room for the closing line
    lines: list[str] = []
    shown: list[str] = []
    total_current = 0
    full = False
    offset = 0
    while True:
        rows = _context_rows(store, project, offset)
        offset += len(rows)
        for row in rows:
            if _withheld(matcher, project, row["title"] or "", row["text"] or "", json.loads(row["keywords"] or "[]"), row["task_group"] or ""):
                continue
            total_current += 1
            if full:
                continue
            line = _context_line(row, label)
            cost = count_tokens(line + "\n")
            if used + cost + reserve > limit:
                full = True
                continue
            lines.append(line)
            shown.append(row["id"])
            used += cost
        if len(rows) < _PAGE:
            break
    if not lines:
        lines = ["- Nothing is remembered for this project yet."]
    more = total_current - len(shown)
    tail = ["", f"({more} more items are not shown here: search the memory to find them.)"] if more else []
    text = head_text + "\n".join(lines + tail) + "\n"
    while count_tokens(text) > limit and shown:  # per-line counts can differ from the joined text by a token or two
        lines.pop()
        shown.pop()
        more += 1
        tail = ["", f"({more} more items are not shown here: search the memory to find them.)"]
        text = head_text + "\n".join((lines or ["- (memory does not fit the budget)"]) + tail) + "\n"
    return Context(text, count_tokens(text), limit, project, tuple(shown), more)


# ------------------------------------------------------------------ search and show


def search(
    store: Store, query: str, project: str, kind: str | None = None, limit: int = 20
) -> list[SearchHit]:
    """Current items for ``project`` (and global) matching ``query``, best first, tombstones enforced."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    store.catch_up()
    matcher = matcher_for(store)
    hits = search_items(store.view, query, project, kind, limit + 20)
    kept = [h for h in hits if not _withheld(matcher, project, h.title, h.text, h.keywords, h.task_group)]
    return kept[:limit]


def hit_dict(hit: SearchHit) -> dict[str, Any]:
    """A search hit as JSON-ready data."""
    return {
        "id": hit.item_id,
        "kind": hit.kind,
        "scope": hit.scope,
        "title": hit.title,
        "text": hit.text,
        "keywords": list(hit.keywords),
        "trust": hit.trust,
        "status": hit.status,
        "valid_from": hit.valid_from.isoformat() if hit.valid_from else None,
        "valid_to": hit.valid_to.isoformat() if hit.valid_to else None,
        "use_count": hit.use_count,
        "score": hit.score,
    }


@dataclass(frozen=True)
class Evidence:
    """A session an item came from (only sessions of the reading project are described)."""

    session_id: str
    source: str
    native_id: str
    cwd: str
    updated_at: datetime | None
    summary: str


@dataclass(frozen=True)
class ItemView:
    """One item as ``show`` prints it."""

    item_id: str
    kind: str
    scope: str
    task_group: str
    title: str
    text: str
    keywords: tuple[str, ...]
    trust: str
    status: str
    valid_from: datetime | None
    valid_to: datetime | None
    created_at: datetime | None
    updated_at: datetime | None
    revision: int
    use_count: int
    last_used: datetime | None
    evidence: tuple[Evidence, ...]
    evidence_elsewhere: int  # evidence sessions from other projects (not described)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        def iso(v: datetime | None) -> str | None:
            return v.isoformat() if v else None

        return {
            "id": self.item_id,
            "kind": self.kind,
            "scope": self.scope,
            "task_group": self.task_group,
            "title": self.title,
            "text": self.text,
            "keywords": list(self.keywords),
            "trust": self.trust,
            "status": self.status,
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
            "revision": self.revision,
            "use_count": self.use_count,
            "last_used": iso(self.last_used),
            "evidence": [
                {
                    "session": e.session_id,
                    "source": e.source,
                    "native_id": e.native_id,
                    "cwd": e.cwd,
                    "updated_at": iso(e.updated_at),
                    "summary": e.summary,
                }
                for e in self.evidence
            ],
            "evidence_in_other_projects": self.evidence_elsewhere,
        }


def show_item(store: Store, item_id: str, project: str) -> ItemView | None:
    """One item of ``project`` (or global) with its evidence; None when unknown, out of scope or forgotten.

    Retired and invalidated items are shown with their status (a retired item's
    text has left the view).
    """
    try:
        wanted = str(UUID(item_id.strip().strip("[]").strip().removeprefix("item:")))
    except ValueError:
        return None
    store.catch_up()
    reads = ViewReads(store.view)
    rows = reads.query(
        f"SELECT i.*, u.use_count, u.last_used FROM {table('items')} i "
        f"LEFT JOIN {table('item_usage')} u ON u.item_id = i.id WHERE i.id = ? AND i.scope IN (?, ?)",
        [wanted, project, GLOBAL_SCOPE],
    )
    if not rows:
        return None
    row = rows[0]
    keywords = tuple(json.loads(row["keywords"] or "[]"))
    matcher = matcher_for(store)
    if _withheld(matcher, project, row["title"] or "", row["text"] or "", keywords, row["task_group"] or ""):
        return None
    sessions = reads.query(
        f"SELECT s.id, s.source, s.native_id, s.cwd, s.scope, s.updated_at, s.rollout_summary "
        f"FROM {table('item_evidence')} e JOIN {table('sessions')} s ON s.id = e.session_id "
        f"WHERE e.item_id = ? ORDER BY s.updated_at, s.id",
        [wanted],
    )
    evidence = tuple(
        Evidence(
            s["id"], s["source"], s["native_id"], s["cwd"] or "", when(s["updated_at"]),
            matcher.scrub(s["rollout_summary"] or "", project)[0],
        )
        for s in sessions
        if s["scope"] == project
    )
    elsewhere = len(json.loads(row["evidence"] or "[]")) - len(evidence)
    return ItemView(
        item_id=row["id"],
        kind=row["kind"],
        scope=row["scope"],
        task_group=row["task_group"] or "",
        title=row["title"] or "",
        text=row["text"] or "",
        keywords=keywords,
        trust=row["trust"],
        status=row["status"],
        valid_from=when(row["valid_from"]),
        valid_to=when(row["valid_to"]),
        created_at=when(row["created_at"]),
        updated_at=when(row["updated_at"]),
        revision=int(row["revision"] or 1),
        use_count=int(row["use_count"] or 0),
        last_used=when(row["last_used"]),
        evidence=evidence,
        evidence_elsewhere=max(elsewhere, 0),
    )


def read_folder_file(store: Store, project: str, path: str, start: int | None = None, end: int | None = None) -> str | None:
    """One file of the memory folder as rendered for ``project`` (tombstones enforced), optionally lines start..end.

    The folder is rendered in memory for the project, never read from disk: the
    folder on disk may hold every project's memory.
    """
    files: dict[str, str] = render_files(store, project)
    text = files.get(str(PurePosixPath(path.strip().lstrip("./"))))
    if text is None:
        return None
    if start is None and end is None:
        return text
    lines = text.splitlines()
    first = max((start or 1), 1)
    last = min(end or len(lines), len(lines))
    return "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, last + 1))


def folder_index(store: Store, project: str) -> list[str]:
    """The files of the project's memory folder."""
    return sorted(render_files(store, project))


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
