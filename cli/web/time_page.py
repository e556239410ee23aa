"""Time: memory as it stood at a past moment (transaction time), or as valid at a time (valid time)."""

from __future__ import annotations

from typing import Any

from mnemolog.cli.output import UserError
from mnemolog.cli.web.projects_page import known_scopes
from mnemolog.cli.web.rendering import opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

MODES = ("as_of", "valid_at")
SHOWN_FIRST = ("memory_summary.md", "MEMORY.md")


def time_travel(request: Request) -> Response:
    """GET /time?mode=as_of|valid_at&at=TIME&project=P: the folder (and items) ``history`` renders for that moment."""
    from mnemolog.adapters.tokens import count_tokens
    from mnemolog.cli.options import parse_time

    params = request.query_params
    mode = params.get("mode") if params.get("mode") in MODES else "as_of"
    text = (params.get("at") or "").strip()
    project = params.get("project") or None
    result: dict[str, Any] | None = None
    problem = ""
    with opened(request) as s:
        scopes = known_scopes(s.reads())
        history = s.history()
        runs = list(reversed(history.runs()))
        if text:
            try:
                at = parse_time(text)
            except UserError as error:
                problem = str(error)
            else:
                matcher = s.matcher()
                if mode == "as_of":
                    files = history.folder_as_of(at, matcher, count_tokens, project)
                    items = None
                else:
                    items = history.items_valid_at(at, matcher, project)
                    files = history.folder_valid_at(at, matcher, count_tokens, project)
                order = [n for n in SHOWN_FIRST if n in files] + sorted(n for n in files if n not in SHOWN_FIRST)
                result = {"at": at, "files": [(n, files[n]) for n in order], "valid": items}
    return page(
        request, "time.html", title="Time", mode=mode, at_text=text, project=project, scopes=scopes,
        runs=runs, result=result, problem=problem,
    )


def routes() -> list[Route]:
    """The routes of this page."""
    return [Route("/time", time_travel, methods=["GET"])]
