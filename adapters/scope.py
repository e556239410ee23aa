"""Project scope keys: which project a session (and its memories) belongs to."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from mnemolog.domain.item_kinds import GLOBAL_SCOPE

if TYPE_CHECKING:  # the transcript's pydantic models: the SessionStart hook finds its project without them
    from mnemolog.domain.transcript import Transcript

_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/\s]+)@)?(?P<host>[^:/\s]+):(?P<path>(?!//).*)$")
_SCHEME = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?P<rest>.*)$")


def normalise_remote(remote: str) -> str | None:
    """Return ``host/owner/repo`` for a git remote URL, or ``None`` if it has no host.

    Credentials, the scheme, the user, the port, a trailing ``.git`` and slashes
    are removed and the host is lower-cased; the path keeps its case.
    ``file://`` URLs and plain paths have no host and give ``None``.
    """
    text = remote.strip()
    if not text:
        return None
    host: str
    path: str
    scheme_match = _SCHEME.match(text)
    if scheme_match:
        if scheme_match.group("scheme").lower() == "file":
            return None
        rest = scheme_match.group("rest")
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
        # An IPv6 literal keeps its brackets; otherwise drop the port.
        host = host.partition("]")[0] + "]" if host.startswith("[") else host.partition(":")[0]
    else:
        scp = _SCP_LIKE.match(text)
        if scp is None or len(scp.group("host")) == 1:  # no host, or a drive letter
            return None
        host, path = scp.group("host"), scp.group("path")
    host = host.lower().strip()
    path = path.strip().strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    path = path.strip("/")
    if not host:
        return None
    return f"{host}/{path}" if path else host


def find_repo_root(cwd: str) -> str | None:
    """Walk up from ``cwd`` to the nearest folder that holds ``.git``; ``None`` if none here."""
    try:
        current = os.path.abspath(cwd)
    except (OSError, ValueError):
        return None
    if not _is_dir(current):
        return None
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def project_scope(git_remote: str | None, cwd: str | None, redact_key: Callable[[str], str] | None = None) -> str:
    """The scope key of a project (see :func:`_scope_key`), with any secret in it redacted.

    A token in a folder name would otherwise be stored in every event that
    names the scope; ingest and every reader redact the same way, so a project
    finds its memories under the same key. ``redact_key`` redacts a key that
    may hold a secret (default: the redaction rules).
    """
    key = _scope_key(git_remote, cwd)
    if not _MAY_HOLD_SECRET.search(key.partition(":")[2]):
        return key  # short path parts only: the redactor (slow to load) would find nothing
    if redact_key is not None:
        return redact_key(key)
    from mnemolog.adapters.redaction import redact

    return redact(key)[0]


# What every redaction rule needs: a run of 16+ token characters, or an assignment / credentials.
_MAY_HOLD_SECRET = re.compile(r"[^/\\\s]{16,}|[=@:]")


def _scope_key(git_remote: str | None, cwd: str | None) -> str:
    """Return the scope key of a project.

    Formats, in order of preference:

    - ``git:<host>/<path>`` from the git remote, normalised by
      :func:`normalise_remote`: ``git@github.com:a/b.git``,
      ``https://github.com/a/b``, ``ssh://git@github.com:22/a/b`` and
      ``https://user:token@GitHub.com/a/b.git`` all give ``git:github.com/a/b``.
    - ``path:<repo root>`` when there is no usable remote but ``cwd`` exists on
      this machine inside a git work tree (the nearest folder with ``.git``).
    - ``path:<cwd>`` otherwise (normalised, without a trailing slash).
    - ``unknown`` when there is neither a remote nor a cwd.
    """
    if git_remote:
        normalised = normalise_remote(git_remote)
        if normalised:
            return f"git:{normalised}"
    if cwd and cwd.strip():
        root = find_repo_root(cwd.strip())
        if root is not None:
            return f"path:{root}"
        return f"path:{_clean_path(cwd.strip())}"
    return "unknown"


def _clean_path(path: str) -> str:
    if "\\" in path or re.match(r"^[A-Za-z]:", path):
        return path.rstrip("\\/") or path
    return str(PurePosixPath(path)) if path.startswith("/") else path.rstrip("/") or path


def git_remote(cwd: str) -> str | None:
    """The ``origin`` remote of the repository at ``cwd`` (None without git, a repo or a remote)."""
    try:
        done = subprocess.run(
            ["git", "-C", cwd, "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    remote = done.stdout.strip()
    return remote if done.returncode == 0 and remote else None


def _is_dir(path: str) -> bool:
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        return False


class GitScopes:
    """The scope lookup ingest uses: a session's git remote and its project scope key."""

    def remote_of(self, transcript: Transcript) -> str | None:
        """The session's git remote: as recorded, else asked of its repository when that is on this machine."""
        meta = transcript.meta
        if meta.git_remote is None and meta.cwd and _is_dir(meta.cwd):
            # Claude Code records no remote: ask the repository, so both agents share a scope.
            return git_remote(meta.cwd)
        return meta.git_remote

    def scope_key(self, remote: str | None, cwd: str | None) -> str:
        """The project scope key (see :func:`project_scope`)."""
        return project_scope(remote, cwd)


def folder_scope(folder: str | Path, redact_key: Callable[[str], str] | None = None) -> str:
    """The project scope key of a working folder, as ingest computes it for sessions there."""
    path = Path(folder).expanduser().resolve()
    return project_scope(git_remote(str(path)) if path.is_dir() else None, str(path), redact_key)


def scope_for_cwd(cwd: str | Path | None = None) -> str:
    """The project scope key of a working folder (default: the current one), for a command or agent reading there.

    A key that needs redaction is redacted once per folder and remembered in the
    home folder (``adapters/scope_key_cache.py``): the SessionStart hook finds
    its project without loading the redaction rules.
    """
    from mnemolog.adapters.scope_key_cache import redacted_scope_key

    return folder_scope(cwd if cwd is not None else Path.cwd(), redacted_scope_key)


_SCOPE_PREFIXES = ("git:", "path:")


def resolve_scope(project: str | None, global_: bool = False) -> str:
    """The scope a tombstone is placed in: a scope key as given, a directory's project scope, or global (the default)."""
    if global_ or not project:
        return GLOBAL_SCOPE
    if project == GLOBAL_SCOPE or project.startswith(_SCOPE_PREFIXES):
        return project
    return folder_scope(project)
