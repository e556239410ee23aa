"""The short name of a project, as its scope key gives it (``git:github.com/acme/api`` -> ``api``)."""

from __future__ import annotations

from mnemolog.domain.item_kinds import GLOBAL_SCOPE


def project_label(project: str) -> str:
    """A short readable name for a scope key (the last part of ``git:host/owner/repo`` or ``path:/dir``)."""
    if project == GLOBAL_SCOPE:
        return "global"
    return project.rsplit("/", 1)[-1] or project

