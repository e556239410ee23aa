"""The web application: its routes, the access rules in front of them, and the store each request opens.

Every page is an entrypoint like a CLI command: it parses the request, opens
the store (``cli.command_store.store``: caught up with what other processes wrote),
calls one service or read, and renders. Writes are POSTs that redirect back
(303) to the page, which then shows the change; the request's store session
brings the memory folder and skills in step as a CLI command's does
(``adapters.store_session``). In front of every route: the body cap
(``body_limit``), then the access rules (``security``); what a write says is
kept server-side (``flash``), so no redirect carries what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from mnemolog.cli.output import UserError
from mnemolog.cli.web import (
    consolidation_pages,
    context_page,
    forget_pages,
    item_pages,
    projects_page,
    review_actions,
    time_page,
)
from mnemolog.cli.web.body_limit import BodyLimit
from mnemolog.cli.web.flash import Flashes
from mnemolog.cli.web.rendering import STATIC, page
from mnemolog.cli.web.security import Access, AccessGuard
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

if TYPE_CHECKING:
    from mnemolog.adapters.store import Store

StoreOpener = Callable[[], AbstractContextManager["Store"]]


def _user_error(request: Request, error: Exception) -> Response:
    return page(request, "error.html", status=500, title="Error", error=str(error))


def create_app(access: Access, open_store: StoreOpener | None = None) -> Starlette:
    """The page's ASGI app; ``open_store`` opens the store for one request (default: the configured one)."""
    from mnemolog.cli.command_store import store

    routes = [
        *projects_page.routes(),
        *context_page.routes(),
        *item_pages.routes(),
        *review_actions.routes(),
        *consolidation_pages.routes(),
        *forget_pages.routes(),
        *time_page.routes(),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(BodyLimit), Middleware(AccessGuard, access=access)],
        exception_handlers={UserError: _user_error},
    )
    app.state.access = access
    app.state.open_store = open_store or store
    app.state.flashes = Flashes()
    return app

