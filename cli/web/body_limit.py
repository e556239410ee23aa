"""A size cap on every request body: refused with 413 from its Content-Length, or as soon as the streamed bytes pass it.

The page's forms are a few fields of text, so a body past ``MAX_BODY`` is
never a person's: it is refused before anything reads it (a declared length)
or once the bytes that came pass the cap (a chunked body), the connection
closed so the rest is never read. What passes is read here, counted, and
replayed to the app, so nothing downstream (the CSRF check, the form parser)
can hold more than the cap, whatever the route or method.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from mnemolog.cli.web.security import HEADERS, ASGIApp, Receive, Scope, Send

MAX_BODY = 1024 * 1024
TOO_LARGE = f"refused: the request body is larger than {MAX_BODY // 1024 // 1024} MiB (the page's forms never are)".encode()


def _declared(scope: Scope) -> int | None:
    """The body length the request declares (the largest, when it gives several; None when it gives none)."""
    lengths = [v for k, v in scope.get("headers", []) if k.lower() == b"content-length"]
    sizes = [int(v) for v in lengths if v.strip().isdigit()]
    return max(sizes) if sizes else None


async def _refuse(send: Send) -> None:
    await send({
        "type": "http.response.start",
        "status": 413,
        "headers": [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(TOO_LARGE)).encode()),
            (b"connection", b"close"),  # the server stops reading the body and closes the connection
            *HEADERS,
        ],
    })
    await send({"type": "http.response.body", "body": TOO_LARGE})


class BodyLimit:
    """ASGI middleware: no request body over ``max_body`` bytes reaches the app (413 instead)."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared(scope)
        if declared is not None and declared > self.max_body:
            await _refuse(send)
            return
        messages: list[MutableMapping[str, Any]] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_body:
                await _refuse(send)
                return
            if not message.get("more_body"):
                break
        messages.reverse()

        async def replayed() -> MutableMapping[str, Any]:
            return messages.pop() if messages else await receive()

        await self.app(scope, replayed, send)
