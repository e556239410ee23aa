"""What the next session gets: the exact ``context`` text for a project, with its token count."""

from __future__ import annotations

from mnemolog.cli.web.projects_page import GLOBAL, known_scopes
from mnemolog.cli.web.rendering import opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def context(request: Request) -> Response:
    """GET /context?project=P: the text ``mnemolog context --project P`` prints, and its tokens."""
    from mnemolog.adapters.agent_context import context_preview

    with opened(request) as s:
        scopes = known_scopes(s.reads())
        project = request.query_params.get("project") or next((p for p in scopes if p != GLOBAL), GLOBAL)
        given = context_preview(s, project)  # a preview: no agent was served
    return page(request, "context.html", title="What the next session gets", scopes=scopes, project=project, context=given)


def routes() -> list[Route]:
    """The routes of this page."""
    return [Route("/context", context, methods=["GET"])]
