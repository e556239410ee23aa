"""Consolidations: every run, and each run's audit (inputs, edits as diffs, code's overrides and why, model, prompt hash, tokens)."""

from __future__ import annotations

from mnemolog.cli.web.rendering import not_found, opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def consolidations(request: Request) -> Response:
    """GET /consolidations: the runs, newest first (``audit --since``)."""
    with opened(request) as s:
        runs = list(reversed(s.history().runs()))
    return page(request, "consolidations.html", title="Consolidations", runs=runs)


def consolidation(request: Request) -> Response:
    """GET /consolidations/{ref}: one run's audit, read from the log (``audit RUN``)."""
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id

    reference = request.path_params["ref"]
    with opened(request) as s:
        try:
            run_id = resolve_id(s.reads(), "runs", reference)
        except (UnknownId, AmbiguousId) as error:
            return not_found(request, str(error))
        report = s.history().audit(run_id, s.matcher())
    if report is None:
        return not_found(request, f"no consolidation {reference}")
    return page(request, "consolidation.html", title=f"Consolidation {str(run_id)[:8]}", run=report)


def routes() -> list[Route]:
    """The routes of these pages."""
    return [Route("/consolidations", consolidations, methods=["GET"]), Route("/consolidations/{ref}", consolidation, methods=["GET"])]
