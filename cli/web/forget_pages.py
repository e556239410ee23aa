"""Forget: a value, a session or an item, its plan shown first, then confirmed; tombstones listed (never their values) with lift.

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
    """The plan's one line (ids and counts only: item texts may carry the value)."""
    if what == "session":
        head = f"Session {str(shown.session_id)[:8]} would be deleted"
        return f"{head}: {len(shown.retired)} item(s) would retire."
    state = {"in force": "is already in force (it would be re-armed)", "re-arm": "would be re-armed"}.get(shown.tombstone, "would be placed")
    where = "everywhere" if shown.scope == GLOBAL else f"in {shown.scope}"
    head = f"A tombstone {state} {where}"
    if what == "item":
        head = "The item would retire and its text be tombstoned; " + head[0].lower() + head[1:]
    profiles = f" and {len(shown.profiles)} user profile(s)" if shown.profiles else ""
    scrubbed = f", {len(shown.sessions)} session(s) and {len(shown.notes)} note(s){profiles} scrubbed"
    return f"{head}: {len(shown.retired)} item(s) would retire{scrubbed}."


def _plan(s: Any, what: str, target: str, scope: str) -> Any:
    """The plan of what the form asks for (raises NotFound, UnknownId, AmbiguousId, ValueError)."""
    from mnemolog.domain.ids import resolve_id
    from mnemolog.domain.services import forget as forgetting

    if what == "value":
        return forgetting.plan_forget_value(s, target, scope)
    if what == "session":
        return forgetting.plan_forget_session(s, resolve_id(s.reads(), "sessions", target))
    return forgetting.plan_forget_item(s, resolve_id(s.reads(), "items", target))


def _shown(plan: Any) -> Any:
    """What the confirm page lists: an item's forget is that of its text."""
    return getattr(plan, "value", plan)


def _fingerprint(plan: Any) -> str:
    """A digest of the ids a plan changes (no value, no text): the confirm form carries it, so what was shown is what is done."""
    import hashlib

    shown = _shown(plan)
    ids = [str(r.item_id) for r in shown.retired] + [str(i) for i in (*getattr(shown, "sessions", ()), *getattr(shown, "notes", ()), *getattr(shown, "profiles", ()))]
    return hashlib.sha256(" ".join([plan.action, *ids]).encode()).hexdigest()[:16]


async def preview(request: Request) -> Response:
    """POST /forget/preview: the plan (what forgetting would retire and scrub; nothing is written), and the confirm form."""
    from mnemolog.cli.forget_commands import MIN_VALUE
    from mnemolog.domain.ids import AmbiguousId, UnknownId
    from mnemolog.domain.services import forget as forgetting

    form = await request.form()

    def run() -> Response:
        with opened(request) as s:
            try:
                what, target, scope = _parsed(form, known_scopes(s.reads()))
                plan = _plan(s, what, target, scope)
            except (forgetting.NotFound, UnknownId, AmbiguousId, ValueError) as error:
                return after_write(request, "/forget", problem=str(error) if str(error) else "the value has no words to match")
        short = what == "value" and len(target) < MIN_VALUE
        return page(
            request, "forget_confirm.html", title="Forget: confirm", what=what, target=target, scope=scope,
            preview=_shown(plan), summary=_summary(what, _shown(plan)), short=short, min_value=MIN_VALUE, fingerprint=_fingerprint(plan),
        )

    response: Response = await run_in_threadpool(run)
    return response


async def forget(request: Request) -> Response:
    """POST /forget (confirmed): the plan made again and applied when it is the one shown, the folder re-rendered."""
    from mnemolog.cli.forget_commands import forgot_line
    from mnemolog.cli.memory_folder import updated
    from mnemolog.domain.ids import AmbiguousId, UnknownId
    from mnemolog.domain.services import forget as forgetting

    form = await request.form()

    def run() -> tuple[str, str]:
        with opened(request) as s:
            try:
                what, target, scope = _parsed(form, known_scopes(s.reads()))
                plan = _plan(s, what, target, scope)
                shown = str(form.get("plan") or "")
                if shown and shown != _fingerprint(plan):
                    return "", "memory changed since the preview: nothing was written; preview it again"
                done = plan.apply(s)
            except (forgetting.NotFound, UnknownId, AmbiguousId, ValueError) as error:
                return "", str(error)
            if what == "value":
                message = forgot_line(done).replace(str(done.tombstone_id), str(done.tombstone_id)[:8])
            elif what == "session":
                message = f"session {str(done.session_id)[:8]} {'deleted' if done.deleted else 'was already deleted'}; {len(done.retired)} item(s) retired"
            else:
                message = f"item {str(done.item_id)[:8]} retired; tombstone {str(done.tombstone_id)[:8]} placed on its text; {len(done.also_retired)} other item(s) retired"
        return message + updated(s), ""

    done, problem = await run_in_threadpool(run)
    return after_write(request, "/forget", done=done, problem=problem)


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
                result = forgetting.plan_lift(s, tombstone_id, reason).apply(s)
            except (forgetting.NotFound, UnknownId, AmbiguousId) as error:
                return "", str(error)
        state = "lifted" if result.lifted else "was already lifted"
        return f"tombstone {str(tombstone_id)[:8]} {state}" + updated(s), ""

    done, problem = await run_in_threadpool(run)
    return after_write(request, "/forget", done=done, problem=problem)


def routes() -> list[Route]:
    """The routes of this page."""
    return [
        Route("/forget", forget_page, methods=["GET"]),
        Route("/forget/preview", preview, methods=["POST"]),
        Route("/forget", forget, methods=["POST"]),
        Route("/tombstones/{ref}/lift", lift, methods=["POST"]),
    ]
