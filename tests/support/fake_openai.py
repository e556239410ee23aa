"""A real HTTP server on loopback that speaks OpenAI's ``POST /v1/chat/completions``.

Tests queue replies in order and inspect every request the server received,
so the real ``openai`` client is exercised end to end::

    def test_x(fake_openai):
        fake_openai.queue(StageOneOutput(...))          # a structured answer
        fake_openai.queue(status=429)                   # an HTTP error
        fake_openai.queue("not json")                   # malformed content
        client = openai.OpenAI(base_url=fake_openai.base_url, api_key="k")
        ...
        assert fake_openai.requests[0].model == "m"

When no reply is queued the server answers HTTP 418, which the client does not
retry, so a missing reply fails a test quickly and visibly.

A request with ``"stream": true`` gets the reply as server-sent events, a few
characters a chunk, with the usage in the last chunk (as llama.cpp, vLLM and
OpenAI send it). ``GET /v1/models`` lists one model; ``context_window`` set,
it carries llama.cpp's ``meta.n_ctx`` and ``GET /props`` answers too.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import BaseModel

__all__ = ["FakeOpenAI", "QueuedReply", "RecordedRequest", "fake_openai"]


@dataclass(frozen=True)
class QueuedReply:
    """One reply the server will give, in queue order."""

    status: int = 200
    content: str | None = None
    usage: tuple[int, int] = (100, 20)
    finish_reason: str = "stop"
    refusal: str | None = None
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    raw_body: bytes | None = None  # sent as is, overriding everything but status and headers


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received (header names lowercased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        """The ``model`` field of the request."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages, in order."""
        return list(self.body.get("messages", []))

    def message(self, role: str) -> str:
        """The text content of the first message with ``role``."""
        for message in self.messages:
            if message.get("role") == role:
                content = message.get("content", "")
                if isinstance(content, list):
                    return "".join(str(part.get("text", "")) for part in content)
                return str(content)
        raise KeyError(f"no {role} message in request")

    @property
    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` field (``{}`` when absent)."""
        value = self.body.get("response_format") or {}
        return dict(value)

    @property
    def schema_name(self) -> str | None:
        """The JSON schema's name when ``response_format`` is a json_schema."""
        name = self.response_format.get("json_schema", {}).get("name")
        return None if name is None else str(name)

    @property
    def schema(self) -> dict[str, Any]:
        """The JSON schema itself (``{}`` when absent)."""
        return dict(self.response_format.get("json_schema", {}).get("schema", {}))


class FakeOpenAI:
    """The server: start it, queue replies, read ``requests``, stop it."""

    def __init__(self) -> None:
        self._replies: deque[QueuedReply] = deque()
        self.context_window: int | None = None
        self.chunk_chars = 8
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.unexpected: int = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give the OpenAI client (ends with ``/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAI:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def queue(
        self,
        content: str | BaseModel | dict[str, Any] | None = None,
        *,
        status: int = 200,
        usage: tuple[int, int] = (100, 20),
        finish_reason: str = "stop",
        refusal: str | None = None,
        error_message: str = "",
        headers: dict[str, str] | None = None,
        raw_body: bytes | None = None,
    ) -> None:
        """Queue one reply.

        ``content`` becomes the assistant message's content: a pydantic model
        or dict is dumped to JSON, a string is sent as is (so malformed JSON
        can be queued). A ``status`` other than 200 sends an OpenAI-style
        error body instead. ``usage`` is (prompt_tokens, completion_tokens).
        """
        if isinstance(content, BaseModel):
            text: str | None = content.model_dump_json()
        elif isinstance(content, dict):
            text = json.dumps(content)
        else:
            text = content
        reply = QueuedReply(
            status=status,
            content=text,
            usage=usage,
            finish_reason=finish_reason,
            refusal=refusal,
            error_message=error_message or f"fake error {status}",
            headers=dict(headers or {}),
            raw_body=raw_body,
        )
        with self._lock:
            self._replies.append(reply)

    @property
    def pending(self) -> int:
        """How many queued replies were not used yet."""
        with self._lock:
            return len(self._replies)

    def _next(self) -> QueuedReply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


def _completion(reply: QueuedReply, model: str) -> dict[str, Any]:
    prompt_tokens, completion_tokens = reply.usage
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": reply.content,
                    "refusal": reply.refusal,
                },
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error(reply: QueuedReply) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
    }.get(reply.status, "server_error" if reply.status >= 500 else "invalid_request_error")
    return {"error": {"message": reply.error_message, "type": kind, "param": None, "code": None}}


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_unparsed": raw.decode("utf-8", errors="replace")}
            path = self.path.split("?", 1)[0]
            server._record(
                RecordedRequest(
                    method="POST", path=path, headers=dict(self.headers.items()), body=body
                )
            )
            if path.rstrip("/") != "/v1/chat/completions":
                payload = {"error": {"message": f"no route {path}", "type": "not_found_error"}}
                self._send(404, json.dumps(payload).encode())
                return
            reply = server._next()
            if reply is None:
                server.unexpected += 1
                payload = {
                    "error": {"message": "fake server: no reply queued", "type": "test_error"}
                }
                self._send(418, json.dumps(payload).encode())
                return
            if reply.raw_body is not None:
                self._send(reply.status, reply.raw_body, reply.headers)
            elif reply.status != 200:
                self._send(reply.status, json.dumps(_error(reply)).encode(), reply.headers)
            elif body.get("stream"):
                self._stream(reply, str(body.get("model", "fake-model")))
            else:
                completion = _completion(reply, str(body.get("model", "fake-model")))
                self._send(200, json.dumps(completion).encode(), reply.headers)

        def _stream(self, reply: QueuedReply, model: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            text = reply.content or ""
            size = max(1, server.chunk_chars)
            pieces = [text[i : i + size] for i in range(0, len(text), size)]
            try:
                for piece in pieces:
                    self._event(_chunk(model, {"content": piece}, None))
                if reply.refusal:
                    self._event(_chunk(model, {"refusal": reply.refusal}, None))
                self._event(_chunk(model, {}, reply.finish_reason))
                prompt_tokens, completion_tokens = reply.usage
                self._event({**_chunk(model, {}, None), "choices": [], "usage": {
                    "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens}})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading (a looping answer is cut short)
            self.close_connection = True

        def _event(self, payload: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
            self.wfile.flush()

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/v1/models":
                entry: dict[str, Any] = {"id": "fake-model", "object": "model", "owned_by": "fake"}
                if server.context_window:
                    entry["meta"] = {"n_ctx": server.context_window}
                self._send(200, json.dumps({"object": "list", "data": [entry]}).encode())
            elif path == "/props" and server.context_window:
                self._send(200, json.dumps({"default_generation_settings": {"n_ctx": server.context_window}}).encode())
            else:
                self._send(404, json.dumps({"error": {"message": f"no route {path}"}}).encode())

    return Handler


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake OpenAI server for one test; stopped afterwards."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()
