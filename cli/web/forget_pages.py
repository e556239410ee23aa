"""Forget: a value, a session or an item, previewed first, then confirmed; tombstones listed (never their values) with lift.

The value a person types goes only into the preview page (a hidden field of
the confirm form, never a URL, a log line or a redirect) and into the
service, which stores a keyed hash of it, never the value.
"""

from __future__ import annotations

from typing import Any

from mnemolog.cli.web.projects_page import GLOBAL, known_scopes
from mnemolog.cli.web.rendering import after_write, opened, page
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

WHAT = ("value", "session", "item")


def forget_page(request: Request) -> Response:
    """GET /forget: the three forms, and every tombstone (id, scope, reason, when, lifted, suppressions)."""
    from mnemolog.domain.services import listing

    with opened(request) as s:
        reads = s.reads()
        scopes = known_scopes(reads)
        tombstones = listing.list_tombstones(reads, None)
    return page(request, "forget.html", title="Forget", scopes=scopes, tombstones=tombstones)


def _parsed(form: Any, scopes: list[str]) -> tuple[str, str, str]:
    what = str(form.get("what") or "")
    if what not in WHAT:
        raise ValueError("choose what to forget: a value, a session or an item")
    target = str(form.get("target") or "").strip()
    if not target:
        raise ValueError(f"give the {what} to forget")
    scope = str(form.get("scope") or GLOBAL)
    if scope not in scopes:
        raise ValueError(f"not a known scope: {scope[:80]!r}")
    return what, target, scope


def _summary(what: str, shown: Any) -> str:
    """The preview's one line (ids and counts only: item texts may carry the value)."""
    if what == "session":
        head = f"Session {str(shown.deleted_session)[:8]} would be deleted"
    else:
        state = "is already in force (it would be re-armed)" if shown.already else "would be placed"
        where = "everywhere" if shown.scope == GLOBAL else f"in {shown.scope}"
        head = f"A tombstone {state} {where}"
        if what == "item":
            head = "The item would retire and its text be tombstoned; " + head[0].lower() + head[1:]
    scrubbed = f", {len(shown.scrubbed_sessions)} session(s) and {shown.scrubbed_notes} note(s) scrubbed" if what != "session" else ""
    return f"{head}: {len(shown.retired)} item(s) would retire{scrubbed}."


async def preview(request: Request) -> Response:
    """POST /forget/preview: what forgetting would retire and scrub (nothing is written), and the confirm form."""
    from mnemolog.cli.forget_commands import MIN_VALUE
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id
    from mnemolog.domain.services import forget as forgetting
    from mnemolog.domain.services import previews

    form = await request.form()

    def run() -> Response:
        with opened(request) as s:
            reads = s.reads()
            try:
                what, target, scope = _parsed(form, known_scopes(reads))
                if what == "value":
                    shown = previews.preview_forget_value(s, target, scope)
                elif what == "session":
                    shown = previews.preview_forget_session(s, resolve_id(reads, "sessions", target))
                else:
                    shown = previews.preview_forget_item(s, resolve_id(reads, "items", target))
            except (forgetting.NotFound, UnknownId, AmbiguousId, ValueError) as error:
                return after_write("/forget", problem=str(error) if str(error) else "the value has no words to match")
        short = what == "value" and len(target) < MIN_VALUE
        return page(
            request, "forget_confirm.html", title="Forget: confirm", what=what, target=target, scope=scope,
            preview=shown, summary=_summary(what, shown), short=short, min_value=MIN_VALUE,
        )

    response: Response = await run_in_threadpool(run)
    return response


async def forget(request: Request) -> Response:
    """POST /forget (confirmed): one forget service call, the folder re-rendered, back to the Forget page."""
    from mnemolog.cli.memory_folder import updated
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id
    from mnemolog.domain.services import forget as forgetting

    form = await request.form()

    def run() -> tuple[str, str]:
        with opened(request) as s:
            try:
                what, target, scope = _parsed(form, known_scopes(s.reads()))
                if what == "value":
                    done = forgetting.forget_value(s, target, scope)
                    message = (
                        f"tombstone {str(done.tombstone_id)[:8]} {'was already in force' if done.already else 'placed'} "
                        f"(scope {scope}); {len(done.retired)} item(s) retired, {len(done.scrubbed_sessions)} session(s) scrubbed"
                    )
                elif what == "session":
                    gone = forgetting.forget_session(s, resolve_id(s.reads(), "sessions", target))
                    message = f"session {str(gone.session_id)[:8]} {'deleted' if gone.deleted else 'was already deleted'}; {len(gone.retired)} item(s) retired"
                else:
                    item = forgetting.forget_item(s, resolve_id(s.reads(), "items", target))
                    message = f"item {str(item.item_id)[:8]} retired; tombstone {str(item.tombstone_id)[:8]} placed on its text; {len(item.also_retired)} other item(s) retired"
            except (forgetting.NotFound, UnknownId, AmbiguousId, ValueError) as error:
                return "", str(error)
        return message + updated(s), ""

    done, problem = await run_in_threadpool(run)
    return after_write("/forget", done=done, problem=problem)


async def lift(request: Request) -> Response:
    """POST /tombstones/{ref}/lift: the tombstone lifted (an event); items it retired stay retired."""
    from mnemolog.cli.memory_folder import updated
    from mnemolog.domain.ids import AmbiguousId, UnknownId, resolve_id
    from mnemolog.domain.services import forget as forgetting

    form = await request.form()
    reason = str(form.get("reason") or "lifted at the user's request")

    def run() -> tuple[str, str]:
        with opened(request) as s:
            try:
                tombstone_id = resolve_id(s.reads(), "tombstones", request.path_params["ref"])
                result = forgetting.lift(s, tombstone_id, reason)
            except (forgetting.NotFound, UnknownId, AmbiguousId) as error:
                return "", str(error)
        state = "lifted" if result.lifted else "was already lifted"
        return f"tombstone {str(tombstone_id)[:8]} {state}" + updated(s), ""

    done, problem = await run_in_threadpool(run)
    return after_write("/forget", done=done, problem=problem)


def routes() -> list[Route]:
    """The routes of this page."""
    return [
        Route("/forget", forget_page, methods=["GET"]),
        Route("/forget/preview", preview, methods=["POST"]),
        Route("/forget", forget, methods=["POST"]),
        Route("/tombstones/{ref}/lift", lift, methods=["POST"]),
    ]
