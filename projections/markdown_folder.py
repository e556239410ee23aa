"""Render the memory folder (Codex's layout) from a :class:`FolderModel`.

``render_folder`` is a pure function: no clock, no file system, every list
sorted, so the same model always gives byte-identical files. Every bullet that
comes from a memory item ends with `` [item:<id>]`` so a citation of a line, or
``mnemolog explain``, can name the item; Codex reads the marker as plain text.

Ordering of items, wherever a section lists them: accepted before proposed
before doubted (rejected items are never rendered), then higher usage count,
then newer ``updated_at``, then item id.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from uuid import UUID

from mnemolog.domain.reads import ItemRow
from mnemolog.projections.codex_layout import rfc3339_utc, rollout_summary_stem
from mnemolog.projections.folder_model import FolderModel, FolderSession, ItemSource

GLOBAL_SCOPE = "global"
SUMMARY_TOKEN_BUDGET = 2500
PROFILE_MAX_WORDS = 350
RECENT_WINDOW_DAYS = 7  # days (counted back from the newest task) listed by day
SHORT_TEXT_WORDS = 40
GROUP_KEYWORDS = 6

SUMMARY_FILE = "memory_summary.md"
MEMORY_FILE = "MEMORY.md"
RAW_MEMORIES_FILE = "raw_memories.md"
ROLLOUT_DIR = "rollout_summaries"
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
SKILL_DESCRIPTION_MAX = 1024  # Claude Code's limit on a skill's description

SUMMARY_SECTIONS = ("User Profile", "User preferences", "General Tips", "What's in Memory")
OLDER_TOPICS = "Older Memory Topics"
NO_PROFILE = "No user profile yet: nothing about the user has been consolidated."

_TRUST_RANK = {"accepted": 0, "proposed": 1, "doubted": 2}
_TIP_KINDS = ("knowledge", "failure", "skill")
_SUMMARY_KINDS = frozenset(("preference", "task", *_TIP_KINDS))  # what memory_summary.md may list
_MEMORY_SECTIONS = (
    ("User preferences", ("preference",)),
    ("Reusable knowledge", ("knowledge",)),
    ("Failures and how to do differently", ("failure",)),
    ("Skills", ("skill",)),
)

Tokens = Callable[[str], int]


# ---------------------------------------------------------------- helpers


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _changed(item: ItemRow) -> datetime:
    """When the item last changed (UTC): its update, else its creation."""
    return _utc(item.updated_at or item.created_at or _EPOCH)


def item_order_key(item: ItemRow) -> tuple[bool, int, int, float, str]:
    """Most important first: pinned, trust, usage count, newer, then item id."""
    return (
        not item.pinned,
        _TRUST_RANK.get(item.trust, len(_TRUST_RANK)),
        -item.use_count,
        -_changed(item).timestamp(),
        str(item.item_id),
    )


def code_span_flags(text: str) -> list[tuple[str, bool]]:
    """``text`` split at backticks, each piece with whether it is inside a code span."""
    parts = text.split("`")
    closed = len(parts) if len(parts) % 2 == 1 else len(parts) - 1  # parts inside matched pairs
    return [(part, index % 2 == 1 and index < closed) for index, part in enumerate(parts)]


_BOLD = re.compile(r"\*\*(?=[^\s*])((?:(?!\*\*).)+?)(?<=[^\s*])\*\*")
_STAR_RUN = re.compile(r"\*{2,}")


def _unbold(part: str) -> str:
    """Bold markers dropped, and any other run of stars (``make: ***``) kept verbatim in a code span."""
    return _STAR_RUN.sub(lambda m: f"`{m.group(0)}`", _BOLD.sub(r"\1", part))


def strip_bold(text: str) -> str:
    """No bold outside code spans: ``**x**`` becomes ``x``; other star runs (``make: ***``) become code.

    A glob like ``'**/*.py'`` inside backticks is kept as it is. An unmatched
    backtick becomes ``'`` first, so the code spans added here pair up.
    """
    if text.count("`") % 2:
        head, _, tail = text.rpartition("`")
        text = f"{head}'{tail}"
    return "`".join(part if code else _unbold(part) for part, code in code_span_flags(text))


def _inline(text: str) -> str:
    """One line of plain text: whitespace collapsed, no bold, no forged item markers."""
    text = strip_bold(text).replace("[item:", "(item:")
    return " ".join(text.split())


def _short(text: str, max_words: int = SHORT_TEXT_WORDS) -> str:
    words = _inline(text).split(" ")
    if len(words) <= max_words:
        return " ".join(words)
    return " ".join(words[:max_words]) + " …"


def _marker(item: ItemRow) -> str:
    return f" [item:{item.item_id}]"


def _group_name(item: ItemRow) -> str:
    """The item's task group; memory of no group is the user's own ("All projects") or its project's."""
    return _inline(item.task_group) or ("All projects" if item.scope == GLOBAL_SCOPE else "This project")


def _label(model: FolderModel, scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        return "Global"
    return _inline(model.scope_labels.get(scope, "")) or scope


def _scope_order(model: FolderModel, scope: str) -> tuple[int, str, str]:
    if scope == GLOBAL_SCOPE:
        return (0, "", "")
    return (1, _label(model, scope).casefold(), scope)


def _one_line(value: str) -> str:
    return value.replace("\r", " ").replace("\n", " ")


# ---------------------------------------------------------------- the view


@dataclass(slots=True)
class _Entry:
    """A shown item as the folder's layout needs it; its texts are read again only where they are written."""

    key: tuple[bool, int, int, float, str]  # item_order_key (its last part is the item id)
    kind: str
    scope: str
    group: str  # _group_name
    tokens: int | None = None  # its memory_summary.md line's tokens (kinds the summary lists)
    day: date | None = None  # a task's day of work
    rank: int = -1  # its place in the summary's drop order (-1: not listed there)

    @property
    def item_id(self) -> str:
        return self.key[4]


@dataclass(frozen=True)
class _Group:
    scope: str
    name: str
    members: tuple[_Entry, ...]  # most important first
    cwds: frozenset[str]  # its items' evidence sessions' working folders
    keyword_counts: Counter[str]

    def keywords(self, limit: int = GROUP_KEYWORDS) -> list[str]:
        return [k for k, _ in sorted(self.keyword_counts.items(), key=lambda kv: (-kv[1], kv[0]))][:limit]


@dataclass(frozen=True)
class _View:
    """The model after the scope filter, indexed in one pass over its items, with each session's file stem."""

    model: FolderModel
    source: ItemSource  # the shown items, read again by id where their texts are written
    entries: tuple[_Entry, ...]  # shown items, most important first
    groups: tuple[_Group, ...]  # scope order, then their most important item, then name
    scopes: tuple[str, ...]  # scopes with at least one item, global first then by label
    scope_cwds: dict[str, frozenset[str]]  # scope -> the non-empty working folders of its items' evidence
    session_cwds: dict[str, frozenset[str]]  # scope -> the non-empty working folders of its sessions in this folder
    sessions: tuple[FolderSession, ...]  # ascending native id
    stems: dict[str, str]  # session_id -> stem
    by_session_id: dict[str, FolderSession]
    skills: tuple[ItemRow, ...] = ()  # skill items, most important first
    skill_names: dict[UUID, str] = field(default_factory=dict)  # skill item id -> its folder under skills/

    def skill_path(self, item: ItemRow) -> str | None:
        """Where a skill item's file is in this folder (None for other items)."""
        name = self.skill_names.get(item.item_id)
        return f"{SKILLS_DIR}/{name}/{SKILL_FILE}" if name else None

    def evidence(self, item: ItemRow) -> list[FolderSession]:
        """The item's evidence sessions present in this folder, oldest first."""
        return _evidence_sessions(self.by_session_id, item)

    def rows(self, entries: Sequence[_Entry], page: int = 500) -> Iterator[ItemRow]:
        """The items of ``entries``, in that order, read ``page`` at a time."""
        for start in range(0, len(entries), page):
            yield from self.source.by_ids([e.item_id for e in entries[start : start + page]])


def _session_cwds(sessions: Sequence[FolderSession]) -> dict[str, frozenset[str]]:
    """Each scope's non-empty working folders, over the folder's sessions."""
    found: dict[str, set[str]] = {}
    for session in sessions:
        if session.cwd.strip():
            found.setdefault(session.scope, set()).add(_one_line(session.cwd))
    return {scope: frozenset(cwds) for scope, cwds in found.items()}


def _evidence_sessions(by_session_id: dict[str, FolderSession], item: ItemRow) -> list[FolderSession]:
    ids = (str(sid) for sid in item.evidence)
    found = {sid: by_session_id[sid] for sid in ids if sid in by_session_id}
    return sorted(found.values(), key=lambda s: (_utc(s.updated_at), s.native_id, s.session_id))


def _assign_stems(sessions: Sequence[FolderSession]) -> dict[str, str]:
    """Codex stems; a (rare) clash gets ``-<session id prefix>`` appended (mnemolog's rule)."""
    stems: dict[str, str] = {}
    used: set[str] = set()
    for session in sessions:
        stem = rollout_summary_stem(
            session.native_id, session.rollout_slug, session.started_at or session.updated_at
        )
        if stem in used:
            stem = f"{stem}-{session.session_id.replace('-', '')[:8]}"
        used.add(stem)
        stems[session.session_id] = stem
    return stems


def _task_day(task: ItemRow, sessions: Sequence[FolderSession]) -> date:
    """The day of the work a task records: its newest session, else its valid time, else its last change."""
    if sessions:
        return _utc(sessions[-1].updated_at).date()
    return _utc(task.valid_from).date() if task.valid_from else _changed(task).date()


class _Counter:
    """``count_tokens`` remembered per text for one render (the summary's headings recur in every attempt)."""

    def __init__(self, count_tokens: Tokens) -> None:
        self.count_tokens = count_tokens
        self.known: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        found = self.known.get(text)
        if found is None:
            found = self.known[text] = self.count_tokens(text)
        return found


def _view(model: FolderModel, count: _Counter | None = None) -> _View:
    """One pass over the model's items: what every file's layout needs, never every item's texts at once.

    With ``count``, each item the summary may list gets its line's tokens: the
    count the views stored when they projected it (``ItemRow.summary_tokens``,
    of ``summary_line``) when the line here is that line, else counted.
    """
    sessions = [s for s in model.sessions if model.project is None or s.scope == model.project]
    sessions.sort(key=lambda s: (s.native_id, s.session_id))
    by_session_id = {s.session_id: s for s in sessions}
    allowed = None if model.project is None else {model.project, GLOBAL_SCOPE}
    entries: list[_Entry] = []
    skills: list[ItemRow] = []
    group_cwds: dict[tuple[str, str], set[str]] = {}
    group_words: dict[tuple[str, str], Counter[str]] = {}
    scope_cwds: dict[str, set[str]] = {}
    for item in model.item_source().each():
        if item.trust == "rejected" or (allowed is not None and item.scope not in allowed):
            continue
        entry = _Entry(item_order_key(item), item.kind, item.scope, _group_name(item))
        evidence = _evidence_sessions(by_session_id, item)
        group = (item.scope, entry.group)
        group_cwds.setdefault(group, set()).update(_one_line(s.cwd) for s in evidence if s.cwd)
        group_words.setdefault(group, Counter()).update(k for k in (_inline(k) for k in item.keywords) if k)
        scope_cwds.setdefault(item.scope, set()).update(_one_line(s.cwd) for s in evidence if s.cwd)
        if item.kind == "task":
            entry.day = _task_day(item, evidence)
        if item.kind == "skill" and item.skill is not None:
            skills.append(item)  # its line needs the folder's skill names: counted below
        elif count is not None and item.kind in _SUMMARY_KINDS:
            entry.tokens = _line_tokens(model, item, None, count)
        entries.append(entry)
    entries.sort(key=lambda e: e.key)
    skills.sort(key=item_order_key)
    skill_names = _skill_names(skills)
    if count is not None:
        by_id = {e.item_id: e for e in entries}
        for item in skills:
            by_id[str(item.item_id)].tokens = _line_tokens(model, item, skill_names[item.item_id], count)
    members: dict[tuple[str, str], list[_Entry]] = {}
    for entry in entries:  # already in importance order
        members.setdefault((entry.scope, entry.group), []).append(entry)
    groups = [
        _Group(scope, name, tuple(found), frozenset(group_cwds[(scope, name)]), group_words[(scope, name)])
        for (scope, name), found in members.items()
    ]
    groups.sort(key=lambda g: (_scope_order(model, g.scope), g.members[0].key, g.name))
    return _View(
        model=model,
        source=model.item_source(),
        entries=tuple(entries),
        groups=tuple(groups),
        scopes=tuple(sorted({e.scope for e in entries}, key=lambda scope: _scope_order(model, scope))),
        scope_cwds={scope: frozenset(cwds) for scope, cwds in scope_cwds.items()},
        session_cwds=_session_cwds(sessions),
        sessions=tuple(sessions),
        stems=_assign_stems(sessions),
        by_session_id=by_session_id,
        skills=tuple(skills),
        skill_names=skill_names,
    )


def _skill_names(items: Sequence[ItemRow]) -> dict[UUID, str]:
    """Each skill's folder name: its own name, unique per scope; a clash across scopes in one
    folder (the shared folder of every project) gets ``-<item id prefix>`` (global skills keep theirs)."""
    skills = [i for i in items if i.kind == "skill" and i.skill is not None]
    skills.sort(key=lambda i: (i.scope != GLOBAL_SCOPE, i.scope, _changed(i).timestamp(), str(i.item_id)))
    names: dict[UUID, str] = {}
    used: set[str] = set()
    for item in skills:
        assert item.skill is not None
        name = item.skill.name
        if name in used:
            name = f"{name}-{str(item.item_id).replace('-', '')[:8]}"
        used.add(name)
        names[item.item_id] = name
    return names


# ---------------------------------------------------------------- MEMORY.md


def _rollout_line(view: _View, session: FolderSession) -> str:
    return (
        f"- {ROLLOUT_DIR}/{view.stems[session.session_id]}.md "
        f"(cwd={_one_line(session.cwd)}, rollout_path={_one_line(session.path)}, "
        f"updated_at={rfc3339_utc(session.updated_at)}, thread_id={session.native_id})"
    )


def _applies_to(view: _View, scope: str, cwds: Collection[str]) -> str:
    """Codex's ``applies_to`` line: where memory of ``scope`` was learnt (``cwds``, its evidence's working folders) and when to reuse it.

    A project whose evidence names no working folder gets its sessions' folders; "unknown" only when none is known.
    """
    label = _label(view.model, scope)
    found = sorted(c for c in cwds if c.strip()) or (sorted(view.session_cwds.get(scope, ())) if scope != GLOBAL_SCOPE else [])
    if scope == GLOBAL_SCOPE:
        cwd = ", ".join(found) if found else "any"
        rule = "applies in any project; project-specific memory wins where they conflict"
    else:
        cwd = ", ".join(found) if found else "unknown"
        rule = f"only within {label}; re-check files and commands before relying on them"
    return f"applies_to: cwd={cwd}; reuse_rule={rule}"


def _scope_line(view: _View, scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        return "scope: global (the user, across all projects)"
    return f"scope: project {_label(view.model, scope)} ({scope})"


def _group_lines(view: _View, group: _Group) -> Iterator[str]:
    """One ``# Task Group`` block, line by line, its items read a page at a time."""
    yield f"# Task Group: {group.name}"
    yield _scope_line(view, group.scope)
    yield _applies_to(view, group.scope, group.cwds)
    task_evidence: list[tuple[int, set[UUID]]] = []
    tasks = [e for e in group.members if e.kind == "task"]
    for number, task in enumerate(view.rows(tasks), start=1):
        task_evidence.append((number, set(task.evidence)))
        yield ""
        yield f"## Task {number}: {_inline(task.title) or 'untitled'}{_marker(task)}"
        yield "### rollout_summary_files"
        sessions = view.evidence(task)
        yield from [_rollout_line(view, s) for s in sessions] or ["- none in this folder"]
        yield "### keywords"
        keywords = [k for k in (_inline(k) for k in task.keywords) if k]
        yield f"- {', '.join(keywords)}" if keywords else "- none recorded"
    for heading, kinds in _MEMORY_SECTIONS:
        members = [e for e in group.members if e.kind in kinds]
        if not members:
            continue
        yield ""
        yield f"## {heading}"
        for item in view.rows(members):
            tags = "".join(f"[Task {n}]" for n, ev in task_evidence if ev & set(item.evidence))
            text = _inline(item.text) or _inline(item.title)
            path = view.skill_path(item)
            if path is not None:
                text = f"{view.skill_names[item.item_id]}: {text} (see {path})"
            yield f"- {text}{' ' + tags if tags else ''}{_marker(item)}"


def _joined(lines: Iterable[str], every: int = 2000) -> Iterator[str]:
    """``"\\n".join(lines)`` in pieces of ``every`` lines."""
    buffer: list[str] = []
    first = True
    for line in lines:
        buffer.append(line)
        if len(buffer) >= every:
            yield ("" if first else "\n") + "\n".join(buffer)
            first, buffer = False, []
    if buffer or first:
        yield ("" if first else "\n") + "\n".join(buffer)


def _memory_md(view: _View) -> Iterator[str]:
    """MEMORY.md, group by group: one ``# Task Group`` block per (scope, task group)."""
    if not view.groups:
        yield "No task groups yet: nothing has been consolidated.\n"
        return
    for number, group in enumerate(view.groups):
        if number:
            yield "\n\n"
        yield from _joined(_group_lines(view, group))
    yield "\n"


# ---------------------------------------------------------------- raw memories, rollout summaries


def _raw_memories(view: _View) -> Iterator[str]:
    """raw_memories.md exactly as Codex writes it, threads in ascending native id order."""
    if not view.sessions:
        yield "# Raw Memories\n\nNo raw memories yet.\n"
        return
    yield "# Raw Memories\n\n"
    yield "Merged stage-1 raw memories (stable ascending thread-id order):\n\n"
    for session in view.sessions:
        yield (
            f"## Thread `{session.native_id}`\n"
            f"updated_at: {rfc3339_utc(session.updated_at)}\n"
            f"cwd: {_one_line(session.cwd)}\n"
            f"rollout_path: {_one_line(session.path)}\n"
            f"rollout_summary_file: {view.stems[session.session_id]}.md\n\n"
            f"{session.raw_memory.strip()}\n\n"
        )


def _render_rollout_summary(session: FolderSession) -> str:
    """One ``rollout_summaries/<stem>.md`` file."""
    lines = [
        f"thread_id: {session.native_id}",
        f"updated_at: {rfc3339_utc(session.updated_at)}",
        f"rollout_path: {_one_line(session.path)}",
        f"cwd: {_one_line(session.cwd)}",
    ]
    if session.git_branch:
        lines.append(f"git_branch: {_one_line(session.git_branch)}")
    summary: str = session.rollout_summary.rstrip()
    return "\n".join(lines) + "\n\n" + summary + "\n"


# ---------------------------------------------------------------- memory_summary.md

_BULLET_LIKE = re.compile(r"^(\s*)(?:[*+]|\d+[.)])\s+")


def _clean_profile(profile: str, max_words: int) -> str:
    """At most ``max_words`` words, line layout kept; no headings, bold or non-``-`` bullets."""
    lines = []
    for raw in profile.replace("\r\n", "\n").split("\n"):
        line = strip_bold(raw).rstrip()
        line = _BULLET_LIKE.sub(r"\1- ", line)
        if line.lstrip().startswith("#"):
            line = line.lstrip().lstrip("#").strip()
        lines.append(line)
    text = "\n".join(lines).strip()
    words = list(re.finditer(r"\S+", text))
    if len(words) > max_words:
        text = text[: words[max_words - 1].end()] if max_words else ""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _scope_suffix_text(model: FolderModel, scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        return ""
    return f" (project: {_label(model, scope)})"


def _tip_line(item: ItemRow, suffix: str, skill_name: str | None) -> str:
    if skill_name is not None:
        path = f"{SKILLS_DIR}/{skill_name}/{SKILL_FILE}"
        return f"- skill {skill_name}: {_short(item.text)} (see {path}){suffix}{_marker(item)}"
    title, text = _inline(item.title), _short(item.text)
    repeated = bool(title) and text.casefold().startswith(title.rstrip("…").casefold())
    body = f"{title}: {text}" if title and text and not repeated else (text or title)
    return f"- {body}{suffix}{_marker(item)}"


def _topic_line(item: ItemRow) -> str:
    keywords = ", ".join(k for k in (_inline(k) for k in item.keywords) if k)
    head = f"{_inline(item.title) or 'untitled'} ({_group_name(item)})"
    return f"- {head}: {keywords}{_marker(item)}" if keywords else f"- {head}{_marker(item)}"


def _summary_bullet(item: ItemRow, suffix: str, skill_name: str | None) -> str:
    """The line memory_summary.md lists ``item`` with: user-wide memory under the general headings, a
    project's under its own block (the project's name, ``suffix``, left out), tasks as topics."""
    if item.kind == "task":
        return _topic_line(item)
    if item.kind == "preference":
        if item.scope == GLOBAL_SCOPE:
            return f"- {_short(item.text or item.title)}{suffix}{_marker(item)}"
        return f"- preference: {_short(item.text or item.title)}{_marker(item)}".replace(suffix, "")
    line = _tip_line(item, suffix, skill_name)
    return line if item.scope == GLOBAL_SCOPE else line.replace("- ", "- tip: ", 1).replace(suffix, "")


def summary_line(item: ItemRow) -> str:
    """The summary's line for ``item`` in any folder that names its skill as the skill names itself.

    The views store its tokens (``summary_tokens``) when they project the item,
    so a render fits the summary without a tokenizer.
    """
    name = item.skill.name if item.kind == "skill" and item.skill is not None else None
    return _summary_bullet(item, "", name)


def _line_tokens(model: FolderModel, item: ItemRow, skill_name: str | None, count: _Counter) -> int:
    """The tokens of ``item``'s summary line (with its newline) in this folder: stored, or counted.

    A project's line is ``summary_line`` unless its texts could hold the project's
    own name, which the line drops (``(project: ...)``), or the folder renamed its skill.
    """
    own = item.skill.name if item.kind == "skill" and item.skill is not None else None
    suffix = _scope_suffix_text(model, item.scope)
    texts = f"{item.title}{item.text}{own or ''}".replace("*", "")
    label_free = not suffix or ("(" not in _label(model, item.scope) and "project" not in texts)
    if item.summary_tokens is not None and skill_name == own and label_free:
        return item.summary_tokens
    return count(_summary_bullet(item, suffix, skill_name) + "\n")


def _fallback_line(group: _Group) -> str:
    keywords = ", ".join(group.keywords())
    tail = f"; keywords: {keywords}" if keywords else ""
    return f"- {group.name}: see MEMORY.md{tail}"


@dataclass(frozen=True)
class _SummaryPlan:
    """What one attempt at the summary keeps: the first ``kept`` items and ``groups`` groups of the drop order."""

    kept: int
    groups: int
    profile_words: int


class _Run:
    """Summary items always listed together in the drop order (a scope's tips, a day's topics, ...): a plan keeps a prefix."""

    def __init__(self, entries: Iterable[_Entry]) -> None:
        self.entries = list(entries)
        self.ranks = [e.rank for e in self.entries]  # ascending: the entries are in importance order
        self.sums = list(accumulate((e.tokens or 0 for e in self.entries), initial=0))

    def kept(self, plan: _SummaryPlan) -> _Kept:
        return _Kept(self, bisect_left(self.ranks, plan.kept))


@dataclass(frozen=True)
class _Kept:
    """The first ``end`` items of a run: their lines, one after another."""

    run: _Run
    end: int

    @property
    def tokens(self) -> int:
        return self.run.sums[self.end]


Line = str | _Kept  # items' lines stand as the kept part of their run until the text is written


def _starts_piece(line: str) -> bool:
    """Whether o200k's pre-tokenizer must start a piece at this line (after a newline): not at whitespace or ``/``."""
    return bool(line) and line[0] != "/" and not line[0].isspace()


class _SummaryRenderer:
    """Renders memory_summary.md for a plan and finds the fullest plan within the budget.

    A plan's tokens are summed, not counted on its text: every line starts a
    piece of o200k's pre-tokenizer (a line after a newline that starts with
    neither whitespace nor ``/``), so the text's tokens are the sum of its
    pieces' tokens; an item's line (with its newline) is counted once, and the
    other lines, with the blank lines after them, once per render. A blank line
    after an item's line joins its closing ``]`` (``]\\n\\n`` is one piece):
    what that adds is counted once. Items are kept in runs (``_Run``), so an
    attempt costs its headings, not its items.
    """

    def __init__(self, view: _View, count: _Counter) -> None:
        self.view = view
        self.count = count
        # Drop order: view.entries is already most important first.
        self.ranked = [e for e in view.entries if e.kind in _SUMMARY_KINDS]
        for rank, entry in enumerate(self.ranked):
            entry.rank = rank
        tasks = [e for e in self.ranked if e.kind == "task"]
        newest = max((t.day for t in tasks if t.day is not None), default=None)
        self.cutoff: date | None = newest - timedelta(days=RECENT_WINDOW_DAYS - 1) if newest else None
        prefs = [e for e in self.ranked if e.kind == "preference"]
        tips = [e for e in self.ranked if e.kind in _TIP_KINDS]
        self.general_prefs = _Run(e for e in prefs if e.scope == GLOBAL_SCOPE)
        self.general_tips = _Run(e for e in tips if e.scope == GLOBAL_SCOPE)
        self.local: dict[str, tuple[_Run, _Run]] = {  # a project's own preferences, then its tips
            scope: (_Run(e for e in prefs if e.scope == scope), _Run(e for e in tips if e.scope == scope))
            for scope in view.scopes
            if scope != GLOBAL_SCOPE
        }
        self.recent: dict[str, list[tuple[date, _Run]]] = {}  # scope -> its days, newest first, with their topics
        self.older: dict[str, _Run] = {}
        for scope in view.scopes:
            mine = [t for t in tasks if t.scope == scope]
            days = sorted({t.day for t in mine if self._is_recent(t) and t.day is not None}, reverse=True)
            self.recent[scope] = [(day, _Run(t for t in mine if self._is_recent(t) and t.day == day)) for day in days]
            self.older[scope] = _Run(t for t in mine if not self._is_recent(t))
        ordered = sorted(view.groups, key=lambda g: (g.members[0].key, g.scope, g.name))
        self.group_rank = {(g.scope, g.name): rank for rank, g in enumerate(ordered)}
        first_task: dict[tuple[str, str], int] = {}
        for task in reversed(tasks):
            first_task[(task.scope, task.group)] = task.rank
        self.first_task = first_task  # the rank of each group's most important task: a plan keeping it covers the group
        self.texts: dict[str, str] = {}  # item id -> its line, for the items a written plan keeps

    def _is_recent(self, task: _Entry) -> bool:
        return self.cutoff is not None and task.day is not None and task.day >= self.cutoff

    def _lines(self, plan: _SummaryPlan) -> list[Line]:
        lines: list[Line] = ["v1", "", "## User Profile", ""]
        profile = _clean_profile(self.view.model.user_profile, plan.profile_words)
        lines += [profile or NO_PROFILE]
        # Only user-wide memory is general: every project's memory sits in that project's block below.
        lines += self._bullets("User preferences", self.general_prefs.kept(plan), "No preferences recorded yet.")
        lines += self._bullets("General Tips", self.general_tips.kept(plan), "No general tips yet.")
        lines += ["", "## What's in Memory"]
        lines += self._whats_in_memory(plan)
        return lines

    @staticmethod
    def _bullets(heading: str, bullets: _Kept, empty: str) -> list[Line]:
        return ["", f"## {heading}", "", bullets if bullets.end else empty]

    def _whats_in_memory(self, plan: _SummaryPlan) -> list[Line]:
        fallbacks = [
            g
            for g in self.view.groups
            if self.first_task.get((g.scope, g.name), plan.kept) >= plan.kept and self.group_rank[(g.scope, g.name)] < plan.groups
        ]
        lines: list[Line] = []
        for scope in self.view.scopes:
            recent = [(day, kept) for day, run in self.recent[scope] if (kept := run.kept(plan)).end]
            local = [kept for run in self.local.get(scope, ()) if (kept := run.kept(plan)).end]
            if not (recent or local):
                continue
            lines += ["", f"### {_label(self.view.model, scope)}"]
            if local:
                lines += ["", _applies_to(self.view, scope, self.view.scope_cwds.get(scope, ())), "", *local]
            for day, kept in recent:
                lines += ["", f"#### {day.isoformat()}", "", kept]
        older_lines: list[Line] = []
        for scope in self.view.scopes:
            topics = self.older[scope].kept(plan)
            older: list[Line] = [topics] if topics.end else []
            older += [_fallback_line(g) for g in fallbacks if g.scope == scope]
            if older:
                older_lines += ["", f"#### {_label(self.view.model, scope)}", "", *older]
        if older_lines:
            lines += ["", f"### {OLDER_TOPICS}", *older_lines]
        return lines or ["", "No memory topics yet."]

    def tokens(self, plan: _SummaryPlan) -> int:
        """The plan's text's tokens, summed over its pieces (see the class)."""
        total, piece, blanks_after_item = 0, "", 0
        for line in [*self._lines(plan), None]:
            if isinstance(line, str) and not line and not piece:  # a blank line after an item's line
                blanks_after_item += 1
                continue
            if isinstance(line, str) and piece and not _starts_piece(line):
                piece += line + "\n"  # this line cannot start a piece: it joins the one before
                continue
            if isinstance(line, str) and not piece and not _starts_piece(line):
                return self.count(self.render(plan))  # after an item's line (no line here starts so)
            if blanks_after_item:
                total += self.count("]" + "\n" * (blanks_after_item + 1)) - self.count("]\n")
                blanks_after_item = 0
            if piece:
                total += self.count(piece)
                piece = ""
            if isinstance(line, _Kept):
                total += line.tokens
            elif line is not None:
                piece = line + "\n"
        return total

    def render(self, plan: _SummaryPlan) -> str:
        """The plan's text."""
        missing = [e for e in self.ranked[: plan.kept] if e.item_id not in self.texts]
        for item in self.view.rows(missing):
            suffix = _scope_suffix_text(self.view.model, item.scope)
            self.texts[str(item.item_id)] = _summary_bullet(item, suffix, self.view.skill_names.get(item.item_id))
        out: list[str] = []
        for line in self._lines(plan):
            out += [self.texts[e.item_id] for e in line.run.entries[: line.end]] if isinstance(line, _Kept) else [line]
        return "\n".join(out) + "\n"

    def fit(self, budget: int) -> str:
        """The fullest summary within ``budget`` tokens, dropping the least important bullets."""
        groups, words = len(self.group_rank), PROFILE_MAX_WORDS
        full = self._plan(len(self.ranked), groups, words)
        if self.tokens(full) <= budget:
            return self.render(full)
        # Drop item bullets first, then the per-group fallback lines, then profile words.
        stages: list[tuple[Callable[[int], _SummaryPlan], int]] = [
            (lambda n: self._plan(n, groups, words), len(self.ranked)),
            (lambda n: self._plan(0, n, words), groups),
            (lambda n: self._plan(0, 0, n), words),
        ]
        for make, size in stages:
            best = _largest_fitting(_fits_with(self, make, budget), size)
            if best is not None:
                return self.render(make(best))
        return self.render(self._plan(0, 0, 0))  # the budget is below the bare headings

    @staticmethod
    def _plan(kept: int, groups: int, words: int) -> _SummaryPlan:
        return _SummaryPlan(kept, groups, words)


def _fits_with(renderer: _SummaryRenderer, make: Callable[[int], _SummaryPlan], budget: int) -> Callable[[int], bool]:
    def fits(size: int) -> bool:
        return renderer.tokens(make(size)) <= budget

    return fits


def _largest_fitting(fits: Callable[[int], bool], upper: int) -> int | None:
    """Largest n in [0, upper) for which ``fits(n)``, by bisection; None when 0 does not fit."""
    if not fits(0):
        return None
    low, high = 0, upper  # fits(low); ``upper`` is known (or taken) not to fit
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return low


# ---------------------------------------------------------------- skills/<name>/SKILL.md


def _code(text: str) -> str:
    """A command as a code span, on one line, with no item marker in it (only the file's own marker cites)."""
    text = " ".join(text.split()).replace("[item:", "(item:")
    return f"`{text}`" if "`" not in text else _inline(text)


def _front_matter_value(text: str) -> str:
    """A one-line YAML scalar: double-quoted (a JSON string is one), so a colon or a quote cannot break it."""
    one = _inline(text)
    if len(one) > SKILL_DESCRIPTION_MAX:
        one = one[: SKILL_DESCRIPTION_MAX - 1].rstrip() + "…"
    return json.dumps(one, ensure_ascii=False)


def _render_skill(view: _View, item: ItemRow) -> str:
    """One skill's ``SKILL.md``: the front matter Claude Code reads (``name``, ``description``), then
    its scope, the steps in order, what they rely on, and the sessions it was learnt from."""
    assert item.skill is not None
    name = view.skill_names[item.item_id]
    description = _inline(item.text) or _inline(item.title) or name
    lines = [
        "---",
        f"name: {name}",
        f"description: {_front_matter_value(description)}",
        "---",
        "",
        f"# {name}",
        "",
        description,
        "",
        f"- {_scope_line(view, item.scope)}",
        f"- {_applies_to(view, item.scope, {_one_line(s.cwd) for s in view.evidence(item)})}",
        "",
        "## Steps",
        "",
    ]
    for number, step in enumerate(item.skill.steps, start=1):
        parts = [_code(step.command)] if step.command.strip() else []
        if step.action.strip():
            parts.append(_inline(step.action))
        lines.append(f"{number}. {' - '.join(parts)}")
    if item.skill.relies_on:
        lines += ["", "## Relies on", ""]
        lines += [f"- {_code(needed)}" for needed in item.skill.relies_on if needed.strip()]
    lines += ["", "## Evidence", ""]
    lines += [_rollout_line(view, s) for s in view.evidence(item)] or [
        f"- {len(item.evidence)} session(s) or note(s), none in this folder"
    ]
    lines += ["", f"Memory item:{_marker(item)}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- entry point


def folder_parts(
    model: FolderModel,
    count_tokens: Callable[[str], int],
    budget: int = SUMMARY_TOKEN_BUDGET,
) -> dict[str, Iterable[str]]:
    """The whole memory folder as pieces of text to write in turn: relative path -> its pieces.

    ``MEMORY.md`` and ``raw_memories.md`` are generators, read group by group
    (their items a page at a time from the model's source) as they are
    written: no file is held whole. The model's items are read once for the
    layout, again for the texts where they are written.
    """
    view = _view(model, _Counter(count_tokens))
    files: dict[str, Iterable[str]] = {
        SUMMARY_FILE: (_SummaryRenderer(view, _Counter(count_tokens)).fit(budget),),
        MEMORY_FILE: _memory_md(view),
        RAW_MEMORIES_FILE: _raw_memories(view),
    }
    for session in view.sessions:
        files[f"{ROLLOUT_DIR}/{view.stems[session.session_id]}.md"] = (_render_rollout_summary(session),)
    for item in view.skills:
        path = view.skill_path(item)
        if path is not None:
            files[path] = (_render_skill(view, item),)
    return dict(sorted(files.items()))


def render_folder(
    model: FolderModel,
    count_tokens: Callable[[str], int],
    budget: int = SUMMARY_TOKEN_BUDGET,
) -> dict[str, str]:
    """Render the whole memory folder: relative path -> file text.

    Pure and deterministic: the same model (and tokenizer) always yields
    byte-identical files. When ``model.project`` is set, only items scoped to
    that project or to ``global`` and only that project's sessions are used.
    Each skill item gets ``skills/<name>/SKILL.md`` (see ``_render_skill``).
    ``memory_summary.md`` is kept within ``budget`` tokens (Codex's 2,500) by
    dropping whole bullets, least important first; ``count_tokens`` must count
    a text as the sum of its o200k pre-tokenizer pieces, as o200k itself and a
    word count do (see ``_SummaryRenderer``).
    """
    return {path: "".join(parts) for path, parts in folder_parts(model, count_tokens, budget).items()}


def render_skills(model: FolderModel, scopes: Collection[str] | None = None) -> dict[str, str]:
    """The folder's skills alone, as ``render_folder`` writes them: name -> SKILL.md text.

    ``scopes`` keeps only the skills of those scopes (their names are the
    folder's, so a clash keeps the name ``render_folder`` gives it). No token
    counting: a skill file has no budget.
    """
    view = _view(model)
    return {
        view.skill_names[item.item_id]: _render_skill(view, item)
        for item in view.skills
        if scopes is None or item.scope in scopes
    }


def item_ids_in(text: str) -> list[str]:
    """The item ids named by ``[item:<id>]`` markers in rendered text, in order of appearance."""
    return re.findall(r"\[item:([^\]\s]+)\]", text)


__all__ = ["SKILLS_DIR", "SKILL_FILE", "SUMMARY_TOKEN_BUDGET", "folder_parts", "item_ids_in", "item_order_key", "render_folder", "render_skills", "summary_line"]
