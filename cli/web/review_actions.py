"""The review queue and the writes on one item: accept, reject, doubt, edit text, pin, change scope.

Each write is one service call (an event); the request's store session then
re-renders the configured memory folder (``adapters.store_session``) so the folder and the next ``context`` show it
at once, then a 303 back to the page it came from.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from typing import Any
from uuid import UUID

from mnemolog.cli.web.projects_page import GLOBAL, known_scopes
from mnemolog.cli.web.rendering import after_write, opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

QUEUE_LIMIT = 300
VERDICTS = ("accepted", "rejected", "doubted")


def back_to(form: Any, default: str) -> str:
    """Where to go after the write: the form's ``back`` when it is a path on this site, else ``default``."""
    target = str(form.get("back") or "")
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else default


def review_queue(request: Request) -> Response:
    """GET /review?project=P: proposed items first, then doubted, then accepted; each with its actions."""
    from mnemolog.domain.services import listing

    project = request.query_params.get("project") or None
    with opened(request) as s:
        reads = s.reads()
        matcher = s.matcher()
        scopes = known_scopes(reads)
        queue = [
            i
            for trust in ("proposed", "doubted", "accepted")
            for i in listing.list_items(reads, matcher, project, trust=trust, status="active", limit=QUEUE_LIMIT)
            if project is None or i.scope == project
        ]
    return page(request, "review.html", title="Review queue", queue=queue, scopes=scopes, project=project)


def _who() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no login name (a container): still a person at the page
        return "web"


async def _write(request: Request, act: Callable[[Any, UUID, Any], str]) -> Response:
    """Parse the form, run ``act`` (one service call) on the item, re-render the folder, redirect back."""
    from mnemolog.cli.memory_folder import updated
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id
    from mnemolog.domain.services.edit import EditRefused
    from mnemolog.domain.services.review import ItemNotFound
    from starlette.concurrency import run_in_threadpool

    form = await request.form()
    reference = request.path_params["ref"]
    default = f"/items/{reference}"

    def run() -> tuple[str, str, str]:
        with opened(request) as s:
            try:
                item_id = resolve_id(s.reads(), "items", reference)
            except (UnknownId, AmbiguousId) as error:
                return "", str(error), ""
            try:
                done = act(s, item_id, form)
            except (ItemNotFound, EditRefused, ValueError) as error:
                return "", str(error), str(item_id)
        return done + updated(s), "", str(item_id)

    done, problem, item_id = await run_in_threadpool(run)
    back = back_to(form, default)
    # Back in a list (the queue), the browser scrolls to the item just changed.
    anchor = f"item-{item_id}" if item_id and not back.startswith("/items/") else ""
    return after_write(request, back, done=done, problem=problem, anchor=anchor, item=item_id if anchor else "")


def _review(s: Any, item_id: UUID, form: Any) -> str:
    from mnemolog.domain.memory_item import Trust
    from mnemolog.domain.services.review import review

    verdict = str(form.get("verdict") or "")
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict[:20]!r}")
    result = review(s, item_id, Trust(verdict), _who(), str(form.get("note") or ""))
    return f"item {str(item_id)[:8]} is {'now' if result.changed else 'already'} {result.trust.value}"


def _edit(s: Any, item_id: UUID, form: Any) -> str:
    from mnemolog.domain.services.edit import edit_item

    title = form.get("title")
    result = edit_item(
        s, item_id, str(form.get("text") or ""), title=None if title is None else str(title),
        editor=_who(), reason=str(form.get("reason") or ""), redactor=s.ports.redactor,
    )
    note = f" ({result.redactions} secret(s) redacted)" if result.redactions else ""
    return f"item {str(item_id)[:8]} {'edited' if result.changed else 'unchanged'}{note}"


def _pin(s: Any, item_id: UUID, form: Any) -> str:
    from mnemolog.domain.services.edit import pin_item

    pinned = str(form.get("pinned") or "1") == "1"
    result = pin_item(s, item_id, pinned, editor=_who())
    state = "pinned" if result.pinned else "unpinned"
    return f"item {str(item_id)[:8]} {'now' if result.changed else 'already'} {state}"


def _scope(s: Any, item_id: UUID, form: Any) -> str:
    from mnemolog.domain.services.edit import change_scope

    target = str(form.get("scope") or "").strip()
    if target not in known_scopes(s.reads()):
        raise ValueError(f"not a known scope: {target[:80]!r}")
    result = change_scope(s, item_id, target, editor=_who(), reason=str(form.get("reason") or ""))
    where = "user-wide" if result.scope == GLOBAL else result.scope
    return f"item {str(item_id)[:8]} {'moved to' if result.changed else 'already in'} {where}"


async def review_item(request: Request) -> Response:
    """POST /items/{ref}/review (verdict=accepted|rejected|doubted, note)."""
    return await _write(request, _review)


async def edit(request: Request) -> Response:
    """POST /items/{ref}/edit (text, title, reason): the item's text replaced, as an event."""
    return await _write(request, _edit)


async def pin(request: Request) -> Response:
    """POST /items/{ref}/pin (pinned=1|0)."""
    return await _write(request, _pin)


async def scope(request: Request) -> Response:
    """POST /items/{ref}/scope (scope=global or a project's scope key)."""
    return await _write(request, _scope)


def routes() -> list[Route]:
    """The routes of the queue and the item writes."""
    return [
        Route("/review", review_queue, methods=["GET"]),
        Route("/items/{ref}/review", review_item, methods=["POST"]),
        Route("/items/{ref}/edit", edit, methods=["POST"]),
        Route("/items/{ref}/pin", pin, methods=["POST"]),
        Route("/items/{ref}/scope", scope, methods=["POST"]),
    ]
