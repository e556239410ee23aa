"""A scripted model server on loopback for the real agents: Codex and Claude Code.

One HTTP server speaks both wires the agents use, streamed as server-sent
events:

- OpenAI's Responses API (``POST /v1/responses``), which Codex calls with
  ``"stream": true`` (``response.created`` ... ``response.completed``);
- Anthropic's Messages API (``POST /v1/messages``), which Claude Code calls
  (``message_start`` ... ``message_stop``).

Every request is recorded (path, headers, JSON body). What the model answers
is decided by a script: a function from the request (a ``Recorded``) to a
``Reply`` (text, or one tool call). A test writes the model's behaviour as
plain Python over what the agent sent, e.g. "if a mnemolog tool is offered and
not yet called, call it; else answer citing the item it returned"::

    with AgentModelServer(script) as server:
        run codex against server.base_url ...
        assert "A's directive" in server.requests[0].text
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["AgentModelServer", "Recorded", "Reply", "ToolCall"]


@dataclass(frozen=True)
class ToolCall:
    """The model calls one tool: ``name`` with ``arguments`` (Codex MCP tools also carry ``namespace``)."""

    name: str
    arguments: dict[str, Any]
    namespace: str | None = None


@dataclass(frozen=True)
class Reply:
    """What the model answers: text, and optionally a tool call after it.

    ``status`` other than 200 answers an HTTP error instead (``error`` as its
    message, ``headers`` such as ``retry-after``); ``stop_reason`` overrides the
    Messages API's (e.g. ``refusal``, ``max_tokens``).
    """

    text: str = ""
    tool_call: ToolCall | None = None
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    stop_reason: str | None = None


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def wire(self) -> str:
        """``responses`` (Codex) or ``messages`` (Claude Code)."""
        return "responses" if self.path.split("?")[0].endswith("/responses") else "messages"

    @property
    def text(self) -> str:
        """Everything the agent sent, as one JSON string (system, instructions, messages, tools)."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered (Codex namespaces as ``namespace.tool``)."""
        names: list[str] = []
        for tool in self.body.get("tools", []) or []:
            if tool.get("type") == "namespace":
                names += [f"{tool.get('name')}.{inner.get('name')}" for inner in tool.get("tools", [])]
            elif "name" in tool:
                names.append(str(tool["name"]))
        return names

    def tool_outputs(self) -> list[str]:
        """The outputs of tool calls the agent sends back, oldest first."""
        outputs: list[str] = []
        if self.wire == "responses":
            for item in self.body.get("input", []) or []:
                if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
                    outputs.append(_flatten(item.get("output")))
            return outputs
        for message in self.body.get("messages", []) or []:
            content = message.get("content")
            if isinstance(content, list):
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "tool_result":
                        outputs.append(_flatten(part.get("content")))
        return outputs

    def tool_calls_made(self) -> list[str]:
        """Names of the tools the model already called in this conversation."""
        names: list[str] = []
        if self.wire == "responses":
            for item in self.body.get("input", []) or []:
                if isinstance(item, dict) and item.get("type") == "function_call":
                    names.append(f"{item.get('namespace')}.{item.get('name')}" if item.get("namespace") else str(item.get("name")))
            return names
        for message in self.body.get("messages", []) or []:
            content = message.get("content")
            if isinstance(content, list):
                names += [str(p.get("name")) for p in content if isinstance(p, dict) and p.get("type") == "tool_use"]
        return names

    @property
    def is_main_turn(self) -> bool:
        """False for Claude Code's side requests (titles, quota probes): those offer no tools."""
        return bool(self.body.get("tools"))


def _flatten(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_flatten(v.get("text", v) if isinstance(v, dict) else v) for v in value)
    if isinstance(value, dict):
        return str(value.get("text", json.dumps(value)))
    return "" if value is None else str(value)


Script = Callable[[Recorded], Reply]


@dataclass
class AgentModelServer:
    """The server; use as a context manager. ``requests`` holds every request, in order."""

    script: Script
    requests: list[Recorded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                pass

            def do_GET(self) -> None:
                # Model lists and health probes: an empty list is a valid answer for both wires.
                self._send_json({"data": [], "object": "list", "models": []})

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                recorded = Recorded("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with server._lock:
                    server.requests.append(recorded)
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._send_json({"input_tokens": 100})
                    return
                if not (path.endswith("/responses") or path.endswith("/messages")):
                    self._send_json({"error": {"message": f"no such endpoint {path}"}}, status=404)
                    return
                try:
                    reply = server.script(recorded)
                except Exception as error:  # a broken script fails the test visibly, not the agent silently
                    self._send_json({"error": {"type": "script_error", "message": repr(error)}}, status=500)
                    return
                if reply.status != 200:
                    error = {"type": "error", "error": {"type": "scripted_error", "message": reply.error or "scripted error"}}
                    self._send_json(error, status=reply.status, headers=reply.headers)
                    return
                if recorded.wire == "messages" and not body.get("stream"):
                    self._send_json(_message_body(reply, body))  # the Anthropic SDK's plain messages.create
                    return
                events = _responses_events(reply, body) if recorded.wire == "responses" else _messages_events(reply, body)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

            def _send_json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The loopback port the server listens on."""
        return int(self._http.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (Codex's provider wants ``/v1`` appended; Claude Code does not)."""
        return f"http://127.0.0.1:{self.port}"

    def main_requests(self, wire: str) -> list[Recorded]:
        """The requests of one wire that offered tools (the conversation's own turns)."""
        with self._lock:
            return [r for r in self.requests if r.wire == wire and r.is_main_turn]

    def __enter__(self) -> AgentModelServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._http.shutdown()
        self._http.server_close()


def _responses_events(reply: Reply, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A Responses API stream: one message item, then optionally one function call item."""
    response_id = f"resp_{uuid.uuid4().hex[:12]}"
    model = str(body.get("model", "scripted"))
    base = {"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": base}
    output: list[dict[str, Any]] = []
    index = 0
    if reply.text:
        item_id = f"msg_{uuid.uuid4().hex[:12]}"
        added = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": added}
        part = {"type": "output_text", "text": "", "annotations": []}
        yield "response.content_part.added", {"type": "response.content_part.added", "item_id": item_id, "output_index": index, "content_index": 0, "part": part}
        yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": item_id, "output_index": index, "content_index": 0, "delta": reply.text}
        yield "response.output_text.done", {"type": "response.output_text.done", "item_id": item_id, "output_index": index, "content_index": 0, "text": reply.text}
        done = {**added, "status": "completed", "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": done}
        output.append(done)
        index += 1
    if reply.tool_call:
        call = reply.tool_call
        item_id = f"fc_{uuid.uuid4().hex[:12]}"
        arguments = json.dumps(call.arguments)
        item: dict[str, Any] = {"type": "function_call", "id": item_id, "call_id": f"call_{uuid.uuid4().hex[:12]}", "name": call.name, "arguments": "", "status": "in_progress"}
        if call.namespace:
            item["namespace"] = call.namespace
        yield "response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}
        yield "response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": index, "delta": arguments}
        yield "response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": index, "arguments": arguments}
        done_call = {**item, "arguments": arguments, "status": "completed"}
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": done_call}
        output.append(done_call)
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 120}
    yield "response.completed", {"type": "response.completed", "response": {**base, "status": "completed", "output": output, "usage": usage}}


def _message_body(reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
    """A whole (not streamed) Messages API answer: a text block and/or one tool_use block."""
    content: list[dict[str, Any]] = []
    if reply.text:
        content.append({"type": "text", "text": reply.text})
    if reply.tool_call:
        content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": reply.tool_call.name, "input": reply.tool_call.arguments})
    stop = reply.stop_reason or ("tool_use" if reply.tool_call else "end_turn")
    return {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": str(body.get("model", "scripted")),
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 20}}


def _messages_events(reply: Reply, body: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """An Anthropic Messages stream: a text block, then optionally one tool_use block."""
    model = str(body.get("model", "scripted"))
    message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}
    yield "message_start", {"type": "message_start", "message": message}
    index = 0
    if reply.text or not reply.tool_call:
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": reply.text or "OK"}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
        index += 1
    if reply.tool_call:
        block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": reply.tool_call.name, "input": {}}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": json.dumps(reply.tool_call.arguments)}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = "tool_use" if reply.tool_call else "end_turn"
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 20}}
    yield "message_stop", {"type": "message_stop"}
