"""Rendering pages: the Jinja2 templates, what every page gets, redirects after a write, error pages."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from mnemolog.cli.web.diffs import word_diff
from mnemolog.cli.web.flash import PARAM, Flash, Flashes
from mnemolog.cli.web.security import CSRF_FIELD, Access
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

NAV = (
    ("/", "Projects"),
    ("/context", "Next session"),
    ("/items", "Items"),
    ("/review", "Review"),
    ("/consolidations", "Consolidations"),
    ("/forget", "Forget"),
    ("/time", "Time"),
)


def short(value: Any) -> str:
    """The first 8 characters of an id (as the CLI prints it; any unique prefix names it)."""
    return str(value or "")[:8]


def label(scope: str | None) -> str:
    """A scope key as a person reads it: ``user-wide`` for global, else the key."""
    return "user-wide" if scope == "global" else (scope or "")


def name(scope: str | None) -> str:
    """A scope's short name: ``user-wide``, else the last part of its key (``git:host/owner/repo`` -> ``repo``)."""
    if scope == "global":
        return "user-wide"
    return (scope or "").rstrip("/").rsplit("/", 1)[-1] or (scope or "")


def _when(value: Any) -> str:
    """An ISO time (or datetime) to the minute, in UTC, as the page shows it."""
    if value is None or value == "":
        return ""
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text[:16].replace("T", " ")


environment = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
environment.filters.update(short=short, label=label, name=name, when=_when)
environment.globals.update(word_diff=word_diff, nav=NAV, csrf_field=CSRF_FIELD)


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Render ``template`` with the page's CSRF token, the navigation and the message of the last write."""
    access: Access = request.app.state.access
    flashes: Flashes = request.app.state.flashes
    said = flashes.take(request.query_params.get(PARAM, ""))
    values: dict[str, Any] = {
        "request": request,
        "path": request.url.path,
        "csrf": access.csrf,
        "message": said.done,
        "problem": said.problem,
        "acted": said.item,
    }
    values.update(context)
    html = environment.get_template(template).render(**values)
    return HTMLResponse(html, status_code=status)


def after_write(request: Request, to: str, done: str = "", problem: str = "", anchor: str = "", item: str = "") -> RedirectResponse:
    """Back to a page after a POST (303: the browser GETs it), with what happened to show (and where, ``#anchor``).

    The message stays on the server (``flash``): the URL names it by a random id, so nothing typed is ever in it.
    """
    target = to
    if done or problem:
        flashes: Flashes = request.app.state.flashes
        key = flashes.put(Flash(done=done, problem=problem, item=item))
        target = to + ("&" if "?" in to else "?") + urlencode({PARAM: key})
    return RedirectResponse(target + (f"#{anchor}" if anchor else ""), status_code=303)


def not_found(request: Request, what: str) -> HTMLResponse:
    """A 404 page naming what was not found."""
    return page(request, "error.html", status=404, title="Not found", error=what)


def opened(request: Request) -> AbstractContextManager[Store]:
    """The store for this request, caught up with the log (closed when the block ends)."""
    opener: Any = request.app.state.open_store
    store: AbstractContextManager[Store] = opener()
    return store
