"""Items: the list with filters, and each item's page (its ``explain`` timeline, with the actions on it)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from mnemolog.cli.web.projects_page import known_scopes
from mnemolog.cli.web.rendering import not_found, opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

KINDS = ("preference", "knowledge", "failure", "task", "skill")
TRUSTS = ("proposed", "accepted", "doubted", "rejected")
STATUSES = ("active", "retired", "invalidated")
LIMIT = 500


def _choice(request: Request, name: str, allowed: tuple[str, ...]) -> str | None:
    value = request.query_params.get(name) or None
    return value if value in allowed else None


def items(request: Request) -> Response:
    """GET /items?project=&kind=&trust=&status=&text=: items, pinned first, then the most recently updated."""
    from mnemolog.domain.services import listing

    params = request.query_params
    with opened(request) as s:
        reads = s.reads()
        scopes = known_scopes(reads)
        project = params.get("project") or None
        filters: dict[str, Any] = {
            "kind": _choice(request, "kind", KINDS),
            "trust": _choice(request, "trust", TRUSTS),
            "status": _choice(request, "status", STATUSES),
            "text": (params.get("text") or "").strip() or None,
        }
        found = listing.list_items(reads, s.matcher(), project if project in scopes else None, limit=LIMIT, **filters)
        if project is not None:
            found = [i for i in found if i.scope == project]  # the list shows one scope; the read adds global
    return page(
        request, "items.html", title="Items", items=found, scopes=scopes, project=project, filters=filters,
        kinds=KINDS, trusts=TRUSTS, statuses=STATUSES, limit=LIMIT,
    )


def item(request: Request) -> Response:
    """GET /items/{ref}: the item's story from the log (any unique id prefix names it)."""
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id

    reference = request.path_params["ref"]
    with opened(request) as s:
        reads = s.reads()
        try:
            item_id = resolve_id(reads, "items", reference)
        except (UnknownId, AmbiguousId) as error:
            return not_found(request, str(error))
        matcher = s.matcher()
        history = s.history()
        story = history.explain(item_id, matcher)
        scopes = known_scopes(reads)
        if story is None:
            return not_found(request, f"no item {reference}")
        row = reads.item(item_id, story.scope)
        words = " ".join(filter(None, (story.now.title, story.now.text)))
        sources: dict[str, dict[str, Any]] = {}  # each session's lines the item came from
        for session in story.sessions:
            recorded = [span for span in story.spans if span.session_id == session.session]  # line-level evidence, when consolidation recorded it
            if recorded:
                sources[session.session] = {"spans": recorded}
            else:  # items recorded without spans: the entries that share the item's words
                sources[session.session] = {"lines": history.source_lines(UUID(session.session), words, matcher)}
    return page(request, "item.html", title=f"Item {str(item_id)[:8]}", story=story, sources=sources, row=row, scopes=scopes)


def routes() -> list[Route]:
    """The routes of these pages."""
    return [Route("/items", items, methods=["GET"]), Route("/items/{ref}", item, methods=["GET"])]
