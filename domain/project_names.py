"""The short name of a project, as its scope key gives it (``git:github.com/acme/api`` -> ``api``)."""

from __future__ import annotations

from mnemolog.domain.plan import GLOBAL_SCOPE


def project_label(project: str) -> str:
    """A short readable name for a scope key (the last part of ``git:host/owner/repo`` or ``path:/dir``)."""
    if project == GLOBAL_SCOPE:
        return "global"
    return project.rsplit("/", 1)[-1] or project


def names_its_project(label: str, scope: str | None) -> bool:
    """Whether ``label`` (an item's task group or keyword) is just the name of the project ``scope``.

    Offline consolidation groups and tags a project's items with its name. Such a
    label says no more than the scope key, which forgetting never rewrites (the
    key names the project): a value forgotten in it is not carried by the item.
    """
    return scope is not None and scope != GLOBAL_SCOPE and label == project_label(scope)
