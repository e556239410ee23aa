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
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from uuid import UUID

from mnemolog.domain.reads import ItemRow
from mnemolog.projections.codex_layout import rfc3339_utc, rollout_summary_stem
from mnemolog.projections.folder_model import FolderModel, FolderSession

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


@dataclass(frozen=True)
class _View:
    """The model after the scope filter, sorted, with each session's file stem."""

    model: FolderModel
    items: tuple[ItemRow, ...]  # shown items, most important first
    sessions: tuple[FolderSession, ...]  # ascending native id
    stems: dict[str, str]  # session_id -> stem
    by_session_id: dict[str, FolderSession]
    skill_names: dict[UUID, str] = field(default_factory=dict)  # skill item id -> its folder under skills/

    def skill_path(self, item: ItemRow) -> str | None:
        """Where a skill item's file is in this folder (None for other items)."""
        name = self.skill_names.get(item.item_id)
        return f"{SKILLS_DIR}/{name}/{SKILL_FILE}" if name else None

    def scopes(self) -> list[str]:
        """Scopes with at least one item, global first then by label."""
        found = {item.scope for item in self.items}
        return sorted(found, key=lambda scope: _scope_order(self.model, scope))

    def evidence(self, item: ItemRow) -> list[FolderSession]:
        """The item's evidence sessions present in this folder, oldest first."""
        ids = (str(sid) for sid in item.evidence)
        found = {sid: self.by_session_id[sid] for sid in ids if sid in self.by_session_id}
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


def _view(model: FolderModel) -> _View:
    items = [item for item in model.items if item.trust != "rejected"]
    sessions = list(model.sessions)
    if model.project is not None:
        allowed = {model.project, GLOBAL_SCOPE}
        items = [item for item in items if item.scope in allowed]
        sessions = [session for session in sessions if session.scope == model.project]
    items.sort(key=item_order_key)
    sessions.sort(key=lambda s: (s.native_id, s.session_id))
    return _View(
        model=model,
        items=tuple(items),
        sessions=tuple(sessions),
        stems=_assign_stems(sessions),
        by_session_id={s.session_id: s for s in sessions},
        skill_names=_skill_names(items),
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


@dataclass(frozen=True)
class _Group:
    scope: str
    name: str
    items: tuple[ItemRow, ...]  # most important first

    @property
    def tasks(self) -> tuple[ItemRow, ...]:
        return tuple(item for item in self.items if item.kind == "task")

    def keywords(self, limit: int = GROUP_KEYWORDS) -> list[str]:
        counts = Counter(_inline(k) for item in self.items for k in item.keywords if _inline(k))
        return [k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][:limit]


def _groups(view: _View) -> list[_Group]:
    """Task groups per (scope, name): scope order, then their most important item, then name."""
    members: dict[tuple[str, str], list[ItemRow]] = {}
    for item in view.items:  # already in importance order
        members.setdefault((item.scope, _group_name(item)), []).append(item)
    groups = [_Group(scope, name, tuple(items)) for (scope, name), items in members.items()]
    groups.sort(
        key=lambda g: (_scope_order(view.model, g.scope), item_order_key(g.items[0]), g.name)
    )
    return groups


# ---------------------------------------------------------------- MEMORY.md


def _rollout_line(view: _View, session: FolderSession) -> str:
    return (
        f"- {ROLLOUT_DIR}/{view.stems[session.session_id]}.md "
        f"(cwd={_one_line(session.cwd)}, rollout_path={_one_line(session.path)}, "
        f"updated_at={rfc3339_utc(session.updated_at)}, thread_id={session.native_id})"
    )


def _applies_to(view: _View, group: _Group) -> str:
    cwds = sorted({_one_line(s.cwd) for item in group.items for s in view.evidence(item)})
    label = _label(view.model, group.scope)
    if group.scope == GLOBAL_SCOPE:
        cwd = ", ".join(cwds) if cwds else "any"
        rule = "applies in any project; project-specific memory wins where they conflict"
    else:
        cwd = ", ".join(cwds) if cwds else "unknown"
        rule = f"only within {label}; re-check files and commands before relying on them"
    return f"applies_to: cwd={cwd}; reuse_rule={rule}"


def _scope_line(view: _View, scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        return "scope: global (the user, across all projects)"
    return f"scope: project {_label(view.model, scope)} ({scope})"


def _render_group(view: _View, group: _Group) -> list[str]:
    lines = [
        f"# Task Group: {group.name}",
        _scope_line(view, group.scope),
        _applies_to(view, group),
    ]
    task_evidence: list[tuple[int, set[UUID]]] = []
    for number, task in enumerate(group.tasks, start=1):
        task_evidence.append((number, set(task.evidence)))
        lines += ["", f"## Task {number}: {_inline(task.title) or 'untitled'}{_marker(task)}"]
        lines.append("### rollout_summary_files")
        sessions = view.evidence(task)
        lines += [_rollout_line(view, s) for s in sessions] or ["- none in this folder"]
        lines.append("### keywords")
        keywords = [k for k in (_inline(k) for k in task.keywords) if k]
        lines.append(f"- {', '.join(keywords)}" if keywords else "- none recorded")
    for heading, kinds in _MEMORY_SECTIONS:
        members = [item for item in group.items if item.kind in kinds]
        if not members:
            continue
        lines += ["", f"## {heading}"]
        for item in members:
            tags = "".join(f"[Task {n}]" for n, ev in task_evidence if ev & set(item.evidence))
            text = _inline(item.text) or _inline(item.title)
            path = view.skill_path(item)
            if path is not None:
                text = f"{view.skill_names[item.item_id]}: {text} (see {path})"
            lines.append(f"- {text}{' ' + tags if tags else ''}{_marker(item)}")
    return lines


def _render_memory_md(view: _View, groups: Sequence[_Group]) -> str:
    """MEMORY.md: one ``# Task Group`` block per (scope, task group)."""
    if not groups:
        return "No task groups yet: nothing has been consolidated.\n"
    blocks = ["\n".join(_render_group(view, group)) for group in groups]
    return "\n\n".join(blocks) + "\n"


# ---------------------------------------------------------------- raw memories, rollout summaries


def _render_raw_memories(view: _View) -> str:
    """raw_memories.md exactly as Codex writes it, threads in ascending native id order."""
    if not view.sessions:
        return "# Raw Memories\n\nNo raw memories yet.\n"
    parts = [
        "# Raw Memories\n\n",
        "Merged stage-1 raw memories (stable ascending thread-id order):\n\n",
    ]
    for session in view.sessions:
        parts.append(
            f"## Thread `{session.native_id}`\n"
            f"updated_at: {rfc3339_utc(session.updated_at)}\n"
            f"cwd: {_one_line(session.cwd)}\n"
            f"rollout_path: {_one_line(session.path)}\n"
            f"rollout_summary_file: {view.stems[session.session_id]}.md\n\n"
            f"{session.raw_memory.strip()}\n\n"
        )
    return "".join(parts)


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


def _scope_suffix(view: _View, item: ItemRow) -> str:
    return _scope_suffix_text(view, item.scope)


def _scope_suffix_text(view: _View, scope: str) -> str:
    if scope == GLOBAL_SCOPE:
        return ""
    return f" (project: {_label(view.model, scope)})"


def _preference_line(view: _View, item: ItemRow) -> str:
    text = _short(item.text or item.title)
    return f"- {text}{_scope_suffix(view, item)}{_marker(item)}"


def _tip_line(view: _View, item: ItemRow) -> str:
    path = view.skill_path(item)
    if path is not None:
        name = view.skill_names[item.item_id]
        return f"- skill {name}: {_short(item.text)} (see {path}){_scope_suffix(view, item)}{_marker(item)}"
    title, text = _inline(item.title), _short(item.text)
    repeated = bool(title) and text.casefold().startswith(title.rstrip("…").casefold())
    body = f"{title}: {text}" if title and text and not repeated else (text or title)
    return f"- {body}{_scope_suffix(view, item)}{_marker(item)}"


def _topic_line(item: ItemRow) -> str:
    keywords = ", ".join(k for k in (_inline(k) for k in item.keywords) if k)
    head = f"{_inline(item.title) or 'untitled'} ({_group_name(item)})"
    return f"- {head}: {keywords}{_marker(item)}" if keywords else f"- {head}{_marker(item)}"


def _fallback_line(group: _Group) -> str:
    keywords = ", ".join(group.keywords())
    tail = f"; keywords: {keywords}" if keywords else ""
    return f"- {group.name}: see MEMORY.md{tail}"


@dataclass(frozen=True)
class _SummaryPlan:
    """What one attempt at the summary keeps."""

    kept: frozenset[UUID]  # item ids
    fallback_groups: frozenset[tuple[str, str]]  # groups that may get a fallback line
    profile_words: int


class _SummaryRenderer:
    """Renders memory_summary.md for a plan and finds the fullest plan within the budget."""

    def __init__(self, view: _View, groups: Sequence[_Group]) -> None:
        self.view = view
        self.groups = list(groups)
        self.prefs = [i for i in view.items if i.kind == "preference"]
        self.prefs.sort(key=lambda i: (_scope_order(view.model, i.scope), item_order_key(i)))
        self.tips = [i for i in view.items if i.kind in _TIP_KINDS]
        self.tasks = [i for i in view.items if i.kind == "task"]
        newest = max((self._day(t) for t in self.tasks), default=None)
        self.cutoff: date | None = (
            newest - timedelta(days=RECENT_WINDOW_DAYS - 1) if newest else None
        )
        # Drop order: view.items is already most important first.
        shown = {"preference", "task", *_TIP_KINDS}
        self.ranked = [i.item_id for i in view.items if i.kind in shown]
        self.group_rank = [(g.scope, g.name) for g in sorted(self.groups, key=self._group_key)]

    @staticmethod
    def _group_key(group: _Group) -> tuple[tuple[bool, int, int, float, str], str, str]:
        return (item_order_key(group.items[0]), group.scope, group.name)

    def _is_recent(self, item: ItemRow) -> bool:
        return self.cutoff is not None and self._day(item) >= self.cutoff

    def _day(self, task: ItemRow) -> date:
        """The day of the work a task records: its newest session, else its valid time, else its last change."""
        sessions = self.view.evidence(task)
        if sessions:
            return _utc(sessions[-1].updated_at).date()
        return _utc(task.valid_from).date() if task.valid_from else _changed(task).date()

    def render(self, plan: _SummaryPlan) -> str:
        lines = ["v1", "", "## User Profile", ""]
        profile = _clean_profile(self.view.model.user_profile, plan.profile_words)
        lines += [profile or NO_PROFILE]
        # Only user-wide memory is general: every project's memory sits in that project's block below.
        lines += self._bullets(
            "User preferences",
            [_preference_line(self.view, i) for i in self.prefs if i.item_id in plan.kept and i.scope == GLOBAL_SCOPE],
            "No preferences recorded yet.",
        )
        lines += self._bullets(
            "General Tips",
            [_tip_line(self.view, i) for i in self.tips if i.item_id in plan.kept and i.scope == GLOBAL_SCOPE],
            "No general tips yet.",
        )
        lines += ["", "## What's in Memory"]
        lines += self._whats_in_memory(plan)
        return "\n".join(lines) + "\n"

    @staticmethod
    def _bullets(heading: str, bullets: list[str], empty: str) -> list[str]:
        return ["", f"## {heading}", "", *(bullets or [empty])]

    def _whats_in_memory(self, plan: _SummaryPlan) -> list[str]:
        kept_tasks = [t for t in self.tasks if t.item_id in plan.kept]
        covered = {(t.scope, _group_name(t)) for t in kept_tasks}
        fallbacks = [
            g
            for g in self.groups
            if (g.scope, g.name) not in covered and (g.scope, g.name) in plan.fallback_groups
        ]
        lines: list[str] = []
        for scope in self.view.scopes():
            recent = [t for t in kept_tasks if t.scope == scope and self._is_recent(t)]
            local = [] if scope == GLOBAL_SCOPE else self._project_bullets(scope, plan)
            if not (recent or local):
                continue
            lines += ["", f"### {_label(self.view.model, scope)}"]
            if local:
                lines += ["", self._applies_to(scope), "", *local]
            days = sorted({self._day(t) for t in recent}, reverse=True)
            for day in days:
                lines += ["", f"#### {day.isoformat()}", ""]
                lines += [_topic_line(t) for t in recent if self._day(t) == day]
        older_lines: list[str] = []
        for scope in self.view.scopes():
            older = [
                _topic_line(t) for t in kept_tasks if t.scope == scope and not self._is_recent(t)
            ]
            older += [_fallback_line(g) for g in fallbacks if g.scope == scope]
            if older:
                older_lines += ["", f"#### {_label(self.view.model, scope)}", "", *older]
        if older_lines:
            lines += ["", f"### {OLDER_TOPICS}", *older_lines]
        return lines or ["", "No memory topics yet."]

    def _project_bullets(self, scope: str, plan: _SummaryPlan) -> list[str]:
        """A project's own preferences and tips, for its block (never under the general headings)."""
        prefs = [f"- preference: {_short(i.text or i.title)}{_marker(i)}" for i in self.prefs if i.scope == scope and i.item_id in plan.kept]
        tips = [_tip_line(self.view, i).replace("- ", "- tip: ", 1) for i in self.tips if i.scope == scope and i.item_id in plan.kept]
        return [line.replace(_scope_suffix_text(self.view, scope), "") for line in [*prefs, *tips]]

    def _applies_to(self, scope: str) -> str:
        """Codex's ``applies_to`` line for a project's block: its working folders and when to reuse it."""
        cwds = sorted({_one_line(s.cwd) for i in self.view.items if i.scope == scope for s in self.view.evidence(i) if s.cwd})
        label = _label(self.view.model, scope)
        cwd = ", ".join(cwds) if cwds else "unknown"
        return f"applies_to: cwd={cwd}; reuse_rule=only within {label}; re-check files and commands before relying on them"

    def fit(self, count_tokens: Tokens, budget: int) -> str:
        """The fullest summary within ``budget`` tokens, dropping the least important bullets."""
        groups, words = len(self.group_rank), PROFILE_MAX_WORDS
        full = self.render(self._plan(len(self.ranked), groups, words))
        if count_tokens(full) <= budget:
            return full
        # Drop item bullets first, then the per-group fallback lines, then profile words.
        stages: list[tuple[Callable[[int], _SummaryPlan], int]] = [
            (lambda n: self._plan(n, groups, words), len(self.ranked)),
            (lambda n: self._plan(0, n, words), groups),
            (lambda n: self._plan(0, 0, n), words),
        ]
        for make, size in stages:
            best = _largest_fitting(_fits_with(self, make, count_tokens, budget), size)
            if best is not None:
                return self.render(make(best))
        return self.render(self._plan(0, 0, 0))  # the budget is below the bare headings

    def _plan(self, kept: int, groups: int, words: int) -> _SummaryPlan:
        return _SummaryPlan(
            frozenset(self.ranked[:kept]), frozenset(self.group_rank[:groups]), words
        )


def _fits_with(
    renderer: _SummaryRenderer,
    make: Callable[[int], _SummaryPlan],
    count_tokens: Tokens,
    budget: int,
) -> Callable[[int], bool]:
    def fits(size: int) -> bool:
        return count_tokens(renderer.render(make(size))) <= budget

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


def _render_summary(
    view: _View, groups: Sequence[_Group], count_tokens: Tokens, budget: int
) -> str:
    """memory_summary.md within ``budget`` tokens as counted by ``count_tokens``."""
    return _SummaryRenderer(view, groups).fit(count_tokens, budget)


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
        f"- {_applies_to(view, _Group(item.scope, _group_name(item), (item,)))}",
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
    dropping whole bullets, least important first.
    """
    view = _view(model)
    groups = _groups(view)
    files = {
        SUMMARY_FILE: _render_summary(view, groups, count_tokens, budget),
        MEMORY_FILE: _render_memory_md(view, groups),
        RAW_MEMORIES_FILE: _render_raw_memories(view),
    }
    for session in view.sessions:
        files[f"{ROLLOUT_DIR}/{view.stems[session.session_id]}.md"] = _render_rollout_summary(
            session
        )
    for item in view.items:
        path = view.skill_path(item)
        if path is not None:
            files[path] = _render_skill(view, item)
    return dict(sorted(files.items()))


def render_skills(model: FolderModel, scopes: Collection[str] | None = None) -> dict[str, str]:
    """The folder's skills alone, as ``render_folder`` writes them: name -> SKILL.md text.

    ``scopes`` keeps only the skills of those scopes (their names are the
    folder's, so a clash keeps the name ``render_folder`` gives it). No token
    counting: a skill file has no budget.
    """
    view = _view(model)
    return {
        view.skill_names[item.item_id]: _render_skill(view, item)
        for item in view.items
        if item.item_id in view.skill_names and (scopes is None or item.scope in scopes)
    }


def item_ids_in(text: str) -> list[str]:
    """The item ids named by ``[item:<id>]`` markers in rendered text, in order of appearance."""
    return re.findall(r"\[item:([^\]\s]+)\]", text)


__all__ = ["SKILLS_DIR", "SKILL_FILE", "SUMMARY_TOKEN_BUDGET", "item_ids_in", "item_order_key", "render_folder", "render_skills"]
