"""Who may use the page: a loopback bind by default, a token for any other address, a CSRF token on every write.

Memory holds what agents learned about a person's work; the page can read and
change all of it. So:

- ``check_bind``: a loopback address needs nothing more; any other address is
  refused unless a token is given (the refusal prints a fresh one to use).
- ``AccessGuard`` (ASGI middleware), on every request: on a loopback bind, the
  ``Host`` header must be one header naming one loopback host exactly (a
  DNS-rebinding page on another name is refused, and so is a list of hosts); with a token, the request must carry it (``?token=`` once,
  which sets a cookie, the cookie, or ``Authorization: Bearer``); every POST
  must carry the page's CSRF token and, when the browser sends an ``Origin``,
  come from the page's own origin.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

MIN_TOKEN = 16
# No script runs on the page, no other site may frame it or receive a form, nothing is cached
# (pages show memory; a forget preview holds the value) and no address leaks as a referrer.
HEADERS = (
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
)
TOKEN_COOKIE = "mnemolog_token"
CSRF_FIELD = "csrf_token"
LOOPBACK_NAMES = ("localhost", "localhost.")
# One host and an optional port, nothing else (no list, no userinfo, no spaces): RFC 9110's Host.
HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::[0-9]{1,5})?")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BindRefused(Exception):
    """The address may not be bound as asked (the message says why and what to do)."""


def new_token() -> str:
    """A fresh random token (URL-safe, 32 bytes of entropy)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and the loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def one_host(header: str) -> str | None:
    """The host a ``Host`` header names (``name``, ``name:port``, ``[v6]:port``), or None when it is not exactly one."""
    found = HOST.fullmatch(header)
    if not found:
        return None
    return found.group("v6") or found.group("name")


def check_bind(host: str, token: str | None) -> None:
    """Refuse to bind a non-loopback ``host`` without a token of at least ``MIN_TOKEN`` characters."""
    if token is not None and len(token) < MIN_TOKEN:
        raise BindRefused(f"the token must be at least {MIN_TOKEN} characters long")
    if is_loopback(host) or token:
        return
    raise BindRefused(
        f"refusing to bind {host}: it is not a loopback address, so anyone who reaches it could read and change "
        f"your memory; to serve it anyway, give a token, e.g. --token {new_token()} (then open the URL it prints)"
    )


@dataclass(frozen=True)
class Access:
    """The rules one server enforces: its CSRF token, and its access token when bound beyond loopback."""

    loopback: bool
    token: str | None = None
    csrf: str = field(default_factory=new_token)

    def host_allowed(self, host_headers: list[str]) -> bool:
        """On a loopback bind, only a loopback host reaches the page (DNS rebinding): one ``Host`` header, naming one host exactly."""
        if not self.loopback:
            return True
        host = one_host(host_headers[0]) if len(host_headers) == 1 else None
        return host is not None and is_loopback(host)

    def csrf_ok(self, given: str | None) -> bool:
        """Whether a form carried this server's CSRF token."""
        return bool(given) and hmac.compare_digest(given or "", self.csrf)

    def token_ok(self, given: str | None) -> bool:
        """Whether a request carried the access token (always true when none is required)."""
        return self.token is None or (bool(given) and hmac.compare_digest(given or "", self.token))


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookie(header: str, name: str) -> str | None:
    """One cookie's value (other sites' cookies on localhost may be anything: no strict parser)."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *(headers or [])],
    })
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> tuple[bytes, list[MutableMapping[str, Any]]]:
    """The whole request body and the messages it came in (replayed to the app)."""
    messages, chunks = [], []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks), messages


def form_field(body: bytes, content_type: str, name: str) -> str | None:
    """One field of a URL-encoded form body (None when absent; the page posts no other kind of form)."""
    if not content_type.startswith("application/x-www-form-urlencoded"):
        return None
    for key, value in parse_qsl(body.decode("latin-1"), keep_blank_values=True):
        if key == name:
            return value
    return None


class AccessGuard:
    """ASGI middleware enforcing ``Access`` before any page runs."""

    def __init__(self, app: ASGIApp, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, outer_send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, outer_send)
            return

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await outer_send(message)

        headers = _headers(scope)
        hosts = [v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"host"]
        if not self.access.host_allowed(hosts):
            await _plain(send, 400, "this page answers only to localhost / 127.0.0.1 (the Host header names another host)")
            return
        if self.access.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if self.access.token_ok(query.get("token")):
                # The token came in the URL: keep it in a cookie and take it out of the address bar.
                rest = urlencode({k: v for k, v in query.items() if k != "token"})
                location = scope.get("path", "/") + (f"?{rest}" if rest else "")
                cookie = f"{TOKEN_COOKIE}={self.access.token}; HttpOnly; SameSite=Strict; Path=/"
                await _plain(send, 303, "signed in", [(b"location", location.encode()), (b"set-cookie", cookie.encode())])
                return
            given = _cookie(headers.get("cookie", ""), TOKEN_COOKIE)
            bearer = headers.get("authorization", "")
            if bearer.lower().startswith("bearer "):
                given = bearer[7:].strip()
            if not self.access.token_ok(given):
                await _plain(send, 401, "this server needs its token: open the URL `mnemolog serve` printed (…/?token=…)")
                return
        if scope.get("method") == "POST":
            origin = headers.get("origin")
            if origin and origin != "null" and urlsplit(origin).netloc != headers.get("host", ""):
                await _plain(send, 403, "refused: the form was posted from another site")
                return
            body, messages = await _read_body(receive)
            if not self.access.csrf_ok(form_field(body, headers.get("content-type", ""), CSRF_FIELD)):
                await _plain(send, 403, "refused: the form has no valid CSRF token (reload the page and try again)")
                return
            replay = iter(messages)

            async def replayed() -> MutableMapping[str, Any]:
                return next(replay, {"type": "http.disconnect"})

            await self.app(scope, replayed, send)
            return
        await self.app(scope, receive, send)
