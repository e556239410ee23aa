"""Skills in the folders Claude Code reads them from, owned by mnemolog and kept in step with memory.

What the real Claude Code 2.1.328 does (read in its binary and tried with it;
see docs/skills.md, "Skills in Claude Code"):

- it offers the model the skills of ``~/.claude/skills/<name>/SKILL.md``
  (``$CLAUDE_CONFIG_DIR/skills``) in every session, and those of
  ``<folder>/.claude/skills`` for every folder from the session's folder up to
  its repository's root, and of ``--add-dir`` folders; nothing else outside a
  repository is read per project (``permissions.additionalDirectories`` in the
  settings does not load skills, and a skill's ``paths`` only match files
  under the session's folder);
- it lists them once at start, before the ``SessionStart`` hooks run, and
  again when a hook answers ``reloadSkills: true``, and it re-reads the folders
  between turns, so a skill written into the user folder shows up in every
  running session, of every project.

Codex 0.169 lists ``$CODEX_HOME/skills/<name>/SKILL.md`` in every request
(``<skills_instructions>``), and never the ``skills/`` of its memory folder
(it reads those only when its own memories are on). So ``install codex`` puts
the user-wide skills there the same way.

So user-wide (global) skills go into the user folder, and a project's skills
reach only that project's sessions: through the ``SessionStart`` hook's context
(always), and, when the user asks for it (``--project-skills-in-repo``), as
real skills in ``<repo>/.claude/skills``, written by that hook for its own
session's repository, with ``reloadSkills``.

Every skill folder mnemolog writes holds ``MARKER`` next to ``SKILL.md``; a
sync only ever changes or removes folders that hold it, and leaves a skill
the user made (same name, no marker) alone.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemolog.adapters.agent_config_files import FileEdit, read_bytes, write_atomically

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store

MARKER = ".mnemolog-skill"
MARKER_TEXT = (
    "This skill folder is written by mnemolog from its memory and replaced or removed by it "
    "(`mnemolog install claude-code --uninstall` takes it out). Edit the skill through mnemolog, not here.\n"
)
SKILL_FILE = "SKILL.md"
# Where install records what it set up for skills (inside the install manifest's ``extra``).
SETTINGS_KEY = "skills"
REPOS_RECORD = "repos.json"  # beside the install manifest: the repositories' skill folders the hook wrote to


@dataclass(frozen=True)
class SkillSync:
    """What bringing one skills folder in step changes: file edits, and the user's skills left alone."""

    folder: Path
    edits: list[FileEdit] = field(default_factory=list)
    kept_users: list[str] = field(default_factory=list)  # wanted names whose folder is the user's own

    @property
    def changes(self) -> bool:
        """Whether applying it changes anything."""
        return any(edit.changes for edit in self.edits)

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            "folder": str(self.folder),
            "written": sorted({e.path.parent.name for e in self.edits if e.changes and e.after is not None}),
            "removed": sorted({e.path.parent.name for e in self.edits if e.changes and e.after is None}),
            "kept_users": list(self.kept_users),
        }


def owned_skills(folder: Path) -> list[str]:
    """Names of the skill folders under ``folder`` that mnemolog wrote (they hold ``MARKER``)."""
    if not folder.is_dir():
        return []
    return sorted(entry.name for entry in folder.iterdir() if entry.is_dir() and not entry.is_symlink() and (entry / MARKER).is_file())


def plan_sync(folder: Path, wanted: Mapping[str, str]) -> SkillSync:
    """The edits that make ``folder`` hold exactly ``wanted`` among mnemolog's skills (name -> SKILL.md)."""
    owned = set(owned_skills(folder))
    edits: list[FileEdit] = []
    kept: list[str] = []
    for name in sorted(wanted):
        skill = folder / name
        if skill.exists() and name not in owned:
            kept.append(name)  # the user's own skill of that name: never overwritten
            continue
        edits.append(_edit(skill / SKILL_FILE, wanted[name].encode("utf-8")))
        edits.append(_edit(skill / MARKER, MARKER_TEXT.encode("utf-8")))
    for name in sorted(owned - set(wanted)):
        edits += _removal(folder / name)
    return SkillSync(folder, edits, kept)


def plan_removal(folder: Path) -> SkillSync:
    """The edits that take every skill mnemolog wrote out of ``folder``."""
    return SkillSync(folder, [edit for name in owned_skills(folder) for edit in _removal(folder / name)])


def _edit(path: Path, data: bytes) -> FileEdit:
    return FileEdit(path, read_bytes(path), data)


def _removal(skill: Path) -> list[FileEdit]:
    # Only the two files mnemolog writes; anything else the folder holds keeps it (and is kept).
    return [FileEdit(path, read_bytes(path), None) for path in (skill / SKILL_FILE, skill / MARKER) if path.is_file()]


def apply_sync(sync: SkillSync, drop_empty: tuple[Path, ...] = ()) -> None:
    """Write the edits: SKILL.md before the marker, the marker removed last.

    A skill folder left empty goes; so do the folders of ``drop_empty`` (ones
    mnemolog created, innermost first) when nothing else is left in them.
    """
    writes = [e for e in sync.edits if e.changes and e.after is not None]
    removals = [e for e in sync.edits if e.changes and e.after is None]
    for edit in sorted(writes, key=lambda e: e.path.name == MARKER):
        write_atomically(edit.path, edit.after)
    for edit in sorted(removals, key=lambda e: e.path.name == MARKER):
        write_atomically(edit.path, None)
    for parent in {e.path.parent for e in removals}:
        with contextlib.suppress(OSError):
            parent.rmdir()  # only when nothing else is left in it
    for folder in drop_empty if removals else ():
        with contextlib.suppress(OSError):
            folder.rmdir()


def repo_skills_folder(cwd: str) -> Path | None:
    """``<repo>/.claude/skills`` for a session's folder (None outside a repository)."""
    from mnemolog.adapters.scope import find_repo_root

    root = find_repo_root(cwd)
    return Path(root) / ".claude" / "skills" if root else None


def load_record(path: Path) -> dict[str, Any]:
    """The repositories the hook wrote project skills into (a JSON file beside the install manifest)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {"repos": []}
    return data if isinstance(data, dict) else {"repos": []}


def remember_repo(path: Path, folder: Path) -> None:
    """Record that ``folder`` (a repository's ``.claude/skills``) holds skills mnemolog wrote."""
    record = load_record(path)
    repos = sorted(set(record.get("repos", [])) | {str(folder)})
    if repos != record.get("repos"):
        write_atomically(path, (json.dumps({**record, "repos": repos}, indent=2) + "\n").encode())


# ------------------------------------------------------------------ from the store


def user_wide_skills(store: Store) -> dict[str, str]:
    """The user-wide (global) skills as rendered: name -> SKILL.md."""
    from mnemolog.domain.plan import GLOBAL_SCOPE
    from mnemolog.projections.rendered_folder import folder_skills

    # The folder of the scope "global" holds global items only (a project's folder: its own and global).
    return folder_skills(store.reads(), store.matcher(), GLOBAL_SCOPE)


def project_skills(store: Store, project: str) -> dict[str, str]:
    """The skills only ``project``'s sessions may read (its own, not the user-wide ones): name -> SKILL.md.

    Read from the project's folder, so each has the name (and the evidence lines) that folder gives it; the
    user-wide ones are the user folder's.
    """
    from mnemolog.projections.rendered_folder import folder_skills

    return folder_skills(store.reads(), store.matcher(), project, scopes={project})


def install_folder(home: Path, agent: str = "claude-code") -> Path:
    """Where ``install AGENT`` keeps its manifest (``$MNEMOLOG_HOME/installs/<agent>``)."""
    return home / "installs" / agent


def installed(home: Path, agent: str = "claude-code") -> dict[str, Any] | None:
    """What ``install AGENT`` set up for skills (None: not installed, or installed without skills)."""
    from mnemolog.adapters.agent_config_files import Manifest

    manifest = Manifest.load(install_folder(home, agent))
    value = manifest.extra.get(SETTINGS_KEY) if manifest.exists else None
    return value if isinstance(value, dict) and value.get("user_folder") else None


def follow_store(store: Store) -> list[SkillSync]:
    """After a write that may change skills (run, capture, forget, ...): each agent's user skill folder in step,
    and every repository folder the hook wrote project skills into."""
    from mnemolog.adapters.agent_install import AGENTS

    home = Path(store.settings.home)
    setups = {agent: setup for agent in AGENTS if (setup := installed(home, agent)) is not None}
    if not setups:
        return []
    wanted = user_wide_skills(store)
    syncs = [plan_sync(Path(setup["user_folder"]), wanted) for setup in setups.values()]
    # A skill forgotten must not wait in a repository (where it may be committed) for the next session there.
    syncs += [plan_sync(folder, project_skills(store, project)) for folder, project in _written_repos(home, setups.get("claude-code"))]
    failed = []
    for sync in syncs:
        try:
            apply_sync(sync)
        except OSError as error:  # one folder not writable: the others are still brought in step
            failed.append(f"{sync.folder}: {error.strerror or error}")
    if failed:
        raise OSError("; ".join(failed))
    return syncs


def _written_repos(home: Path, setup: dict[str, Any] | None) -> list[tuple[Path, str]]:
    """The repository skill folders the hook wrote to that still hold skills of mnemolog's, with their project.

    ``setup``: what ``install claude-code`` set up for skills (``installed``), if it did.
    """
    from mnemolog.adapters.scope import scope_for_cwd

    if setup is None or not setup.get("in_repo"):
        return []
    folders = [Path(f) for f in load_record(install_folder(home) / REPOS_RECORD).get("repos", [])]
    return [(folder, scope_for_cwd(folder.parent.parent)) for folder in folders if owned_skills(folder)]


def sync_repo(store: Store, project: str, cwd: str) -> SkillSync | None:
    """The SessionStart hook with ``--project-skills-in-repo``: the session's repository gets its project's skills."""
    setup = installed(Path(store.settings.home))
    folder = repo_skills_folder(cwd) if setup is not None and setup.get("in_repo") else None
    if folder is None:
        return None
    wanted = project_skills(store, project)
    if not wanted and not owned_skills(folder):
        return SkillSync(folder)  # nothing to write, and nothing of mnemolog's there: the repository stays untouched
    sync = plan_sync(folder, wanted)
    apply_sync(sync)
    remember_repo(install_folder(Path(store.settings.home)) / REPOS_RECORD, folder)
    return sync
