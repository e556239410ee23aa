"""The read path: what an agent reads for one project (context, search, show, a memory file).

Every read is for a project P: it returns items scoped to P or to the user
(``global``), never another project's (guarantee 3; the read port filters the
scope), and withholds every item a tombstone reaching a reader in P withholds
(``matcher.withholds(item, P)``, the one tombstone rule; guarantee 1). Session
text that is shown is scrubbed the same way. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any, Protocol
from uuid import UUID

from mnemolog.domain.context_lines import line_for
from mnemolog.domain.evidence_spans import EvidenceSpan
from mnemolog.domain.holes import has_hole
from mnemolog.domain.item_kinds import ItemKindName
from mnemolog.domain.project_names import project_label
from mnemolog.domain.reads import (
    CONTEXT_TOKEN_ENCODING,
    EvidenceSession,
    ItemReads,
    ItemRow,
    SearchHit,
)
from mnemolog.domain.tombstone_matcher import TombstoneMatcher

KINDS = tuple(kind.value for kind in ItemKindName)
PROFILE_MAX_WORDS = 350
CONTEXT_PAGE = 100  # items read per query while filling the context (a 3,000-token budget holds ~60)
SEARCH_SLACK = 20  # extra hits asked for, so withheld ones leave the list full
CLOSING_RESERVE = 40  # tokens kept free for the closing "more items" line


class Tokenizer(Protocol):
    """Counts and cuts text in the tokens of the model that reads it."""

    def count(self, text: str) -> int:
        """How many tokens ``text`` takes."""
        ...

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` within ``tokens`` tokens."""
        ...


class ContextReads(ItemReads, Protocol):
    """What the context reads: the items view and the user profile of the last consolidation."""

    def user_profile(self) -> str:
        """The user profile of the last completed consolidation."""
        ...


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def item_dict(item: ItemRow) -> dict[str, Any]:
    """An item as JSON-ready data (its evidence ids left out: they may name other projects' sessions)."""
    return {
        "id": str(item.item_id),
        "kind": item.kind,
        "scope": item.scope,
        "task_group": item.task_group,
        "title": item.title,
        "text": item.text,
        "keywords": list(item.keywords),
        "trust": item.trust,
        "status": item.status,
        "valid_from": _iso(item.valid_from),
        "valid_to": _iso(item.valid_to),
        "created_at": _iso(item.created_at),
        "updated_at": _iso(item.updated_at),
        "revision": item.revision,
        "use_count": item.use_count,
        "last_used": _iso(item.last_used),
        "pinned": item.pinned,
        "served_count": item.served_count,
        "skill": item.skill.model_dump(mode="json") if item.skill is not None else None,
    }


# ------------------------------------------------------------------ context


@dataclass(frozen=True)
class Context:
    """What a session receives at start: the text, its token count and the items it shows."""

    text: str
    tokens: int
    budget: int
    project: str
    item_ids: tuple[UUID, ...]
    more: int  # current items of the project that did not fit
    items: tuple[ItemRow, ...] = ()  # the items shown, in order (what the injection log records)
    item_tokens: tuple[int, ...] = ()  # the tokens of each item's line, in the same order


def _more_line(more: int) -> list[str]:
    return ["", f"({more} more items are not shown here: search the memory to find them.)"] if more else []


def context(
    reads: ContextReads,
    matcher: TombstoneMatcher,
    tokenizer: Tokenizer,
    instructions: str,
    project: str,
    budget: int,
) -> Context:
    """The read-path ``instructions``, the user profile and the memory of ``project`` within ``budget`` tokens.

    Items come as ``reads.context_items`` ranks them (pinned first; accepted, proposed, then
    doubted; the most used first, then the most recently updated; rejected
    ones never). Lines that do not fit are left out and counted in ``more``;
    the text, counted with ``tokenizer``, never exceeds the budget. A
    tokenizer of the views' encoding (``CONTEXT_TOKEN_ENCODING``) takes each
    line's count from the item row, counted when it was projected; the text's
    count is then the sum of its parts (lines end in ``]`` and join at a
    pre-token boundary), so no line is tokenized at read time.
    """
    precounted = getattr(tokenizer, "encoding", None) == CONTEXT_TOKEN_ENCODING
    label = project_label(project)
    head = [instructions.rstrip()]
    profile = matcher.scrub(reads.user_profile(), project)[0].strip()
    if profile:
        words = profile.split()
        profile = " ".join(words[:PROFILE_MAX_WORDS]) + (" …" if len(words) > PROFILE_MAX_WORDS else "")
        profile = tokenizer.truncate(profile, max(budget // 5, 0))
        head += ["", "## About the user", "", profile]
    head += ["", f"## Memory for {label} and for you (most trusted and most used first)", ""]
    head_text = "\n".join(head) + "\n"
    used = head_tokens = tokenizer.count(head_text)
    if used > budget:
        text = tokenizer.truncate(head_text, budget)
        return Context(text, tokenizer.count(text), budget, project, (), 0)
    rows: list[ItemRow] = []
    lines: list[str] = []
    costs: list[int] = []
    shown: list[UUID] = []
    withheld = 0
    offset = 0
    full = False
    while not full:  # pages in rank order until the budget is full: what does not fit is counted, not read
        page = reads.context_items(project, offset, CONTEXT_PAGE)
        offset += len(page)
        for item in page:
            if matcher.withholds(item, project):
                withheld += 1
                continue
            line = line_for(item, label)
            stored = item.context_tokens if precounted else None
            cost = stored if stored is not None else tokenizer.count(line + "\n")
            if used + cost + CLOSING_RESERVE > budget:
                full = True
                break
            lines.append(line)
            costs.append(cost)
            shown.append(item.item_id)
            rows.append(item)
            used += cost
        if len(page) < CONTEXT_PAGE:
            break
    # Items past the budget are counted on the index (a withheld one among them counts too: only its number shows).
    current = (reads.context_count(project) - withheld) if full else len(shown)
    empty = "- Nothing is remembered for this project yet." if not current else "- (memory does not fit the budget)"

    def compose() -> str:
        return head_text + "\n".join((lines or [empty]) + _more_line(current - len(shown))) + "\n"

    def measure(text: str) -> int:
        if not (precounted and lines):
            return tokenizer.count(text)
        more = current - len(shown)
        # The closing line joins the last line's "]\n" into one pre-token "]\n\n": count that junction.
        tail = tokenizer.count("]\n\n" + _more_line(more)[1] + "\n") - tokenizer.count("]\n") if more else 0
        return head_tokens + sum(costs) + tail

    text = compose()
    tokens = measure(text)
    while tokens > budget and shown:  # per-line counts can differ from the joined text by a token or two
        lines.pop()
        costs.pop()
        shown.pop()
        rows.pop()
        text = compose()
        tokens = measure(text)
    if tokens > budget:  # not even the closing lines fit: the head alone (it fits)
        text, tokens = head_text, head_tokens
    return Context(text, tokens, budget, project, tuple(shown), current - len(shown), tuple(rows), tuple(costs))


# ------------------------------------------------------------------ search


def hit_dict(hit: SearchHit) -> dict[str, Any]:
    """A search hit as JSON-ready data: the item and its score."""
    return {**item_dict(hit.item), "score": hit.score}


def search(
    reads: ItemReads,
    matcher: TombstoneMatcher,
    query: str,
    project: str,
    kind: str | None = None,
    limit: int = 20,
    any_word: bool = True,
) -> list[SearchHit]:
    """Current items of ``project`` (and global) matching ``query``, best first, at most ``limit``.

    Items with every word come first; without ``any_word``, only those. Raises ValueError for an unknown ``kind``.
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    if limit <= 0:
        return []
    # Just ``limit`` first: forget retired the items its tombstone reached, so a hit is seldom withheld
    # (each hit asked for is one more to check); when one is, the search is asked again for more.
    asked = limit
    while True:
        hits = reads.search(query, project, kind, asked, any_word)
        kept = [hit for hit in hits if not matcher.withholds(hit.item, project)]
        if len(kept) >= limit or len(hits) < asked:
            return kept[:limit]
        asked = max(asked * 2, limit + SEARCH_SLACK)  # hits were withheld: ask for more


# ------------------------------------------------------------------ show


@dataclass(frozen=True)
class ShownItem:
    """One item as ``show`` prints it: the item and the evidence sessions of the reading project."""

    item: ItemRow
    evidence: tuple[EvidenceSession, ...]  # rollout summaries scrubbed for the reader
    evidence_elsewhere: int  # evidence from other projects (not described)
    spans: tuple[EvidenceSpan, ...] = ()  # line-level evidence in the sessions described, quotes scrubbed for the reader

    def span_dicts(self) -> list[dict[str, Any]]:
        """The spans with the session they are in: its agent's own id, its file, the line and the quote."""
        sessions = {e.session_id: e for e in self.evidence}
        return [
            {
                "native_id": sessions[s.session_id].native_id,
                "session_id": str(s.session_id),
                "agent": sessions[s.session_id].source,
                "path": sessions[s.session_id].path,
                "line": s.line,
                "quote": s.quote,
            }
            for s in self.spans
            if s.session_id in sessions
        ]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "spans": self.span_dicts(),
            **item_dict(self.item),
            "evidence": [
                {
                    "session": str(e.session_id),
                    "source": e.source,
                    "native_id": e.native_id,
                    "cwd": e.cwd,
                    "updated_at": _iso(e.updated_at),
                    "summary": e.rollout_summary,
                }
                for e in self.evidence
            ],
            "evidence_in_other_projects": self.evidence_elsewhere,
        }


def item_reference(reference: str) -> UUID | None:
    """The item id in ``<id>``, ``item:<id>`` or ``[item:<id>]``; None when it is not one."""
    try:
        return UUID(reference.strip().strip("[]").strip().removeprefix("item:"))
    except ValueError:
        return None


def show(reads: ItemReads, matcher: TombstoneMatcher, reference: str, project: str) -> ShownItem | None:
    """One item of ``project`` (or global) with its evidence; None when unknown, another project's or withheld.

    Retired and invalidated items are shown with their status (a retired
    item's text has left the view). Only evidence sessions of ``project`` are
    described; the others are counted.
    """
    item_id = item_reference(reference)
    item = reads.item(item_id, project) if item_id is not None else None
    if item is None or matcher.withholds(item, project):
        return None
    evidence = tuple(
        replace(
            session,
            rollout_summary=matcher.scrub(session.rollout_summary, project)[0],
            cwd=matcher.scrub(session.cwd, project)[0] if session.cwd else session.cwd,
        )
        for session in reads.evidence_of(item.item_id)
        if session.scope == project
    )
    described = {e.session_id for e in evidence}
    spans = tuple(
        span.model_copy(update={"quote": quote})
        for span in item.spans
        if span.session_id in described and not has_hole(quote := matcher.scrub(span.quote, project)[0])
    )
    return ShownItem(item, evidence, max(len(item.evidence) - len(evidence), 0), spans)


# ------------------------------------------------------------------ memory files


def memory_file(files: Mapping[str, str], path: str, start: int | None = None, end: int | None = None) -> str | None:
    """One file of a rendered memory folder, whole or its lines ``start..end`` numbered (``12: ...``) for citations.

    ``files`` is the folder rendered for the reading project (never the folder
    on disk, which may hold every project's memory); None when it has no such file.
    """
    text = files.get(str(PurePosixPath(path.strip().lstrip("./"))))
    if text is None:
        return None
    if start is None and end is None:
        return text
    lines = text.splitlines()
    first = max(start or 1, 1)
    last = min(end or len(lines), len(lines))
    return "\n".join(f"{n}: {lines[n - 1]}" for n in range(first, last + 1))


def folder_index(files: Mapping[str, str]) -> list[str]:
    """The files of a rendered memory folder, sorted."""
    return sorted(files)

