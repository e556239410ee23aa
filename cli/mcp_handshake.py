"""``mnemolog mcp`` answers the handshake at once: ``initialize`` and ``tools/list`` before the MCP SDK is loaded.

Importing the SDK (its protocol types are hundreds of pydantic models) takes
most of a second, longer on a busy machine, and a client gives a server a few
seconds to connect (Claude Code: 5 s). So the server starts on stdlib only:
while a thread imports the SDK and builds the tools (``cli/mcp_server.py``),
this module answers a handshake-era ``initialize`` and then ``tools/list``
with what the SDK answers for them (``mcp_handshake.json``, the SDK's own
answers per protocol version, kept equal by tests/integration/test_mcp_handshake.py).
The first message it does not answer hands the connection over: the SDK
replays the client's ``initialize`` and ``notifications/initialized`` (under
an id of its own, whose answer is dropped), then gets every message in the
order it came, so it serves the session exactly as if it had been there from
the start. Anything unusual (a modern-era request, odd parameters, a cursor)
is simply handed over before it is answered.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

ANSWERS = Path(__file__).with_name("mcp_handshake.json")
REPLAY_ID = "mnemolog-handshake-replay"
_END = b"\x00mnemolog: the SDK stopped serving\n"  # never a JSON-RPC line


def package_version() -> str:
    """The installed mnemolog version (the server reports it to clients)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mnemolog")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


class Handshake:
    """What is answered before the SDK serves: the SDK's answers, and the messages it must be replayed."""

    def __init__(self, answers: dict[str, Any], version: Callable[[], str] = package_version) -> None:
        self.answers = answers
        self.version = version
        self.protocol: str | None = None  # the negotiated version, once initialize was answered
        self.initialized = False  # notifications/initialized seen
        self.replay: list[bytes] = []  # what the SDK is given first

    def answer(self, line: bytes) -> bytes | None:
        """The answer to ``line`` (to write to the client), or None: hand over, with ``line`` unanswered.

        A notification after initialize is kept for the SDK and answered with b"" (nothing to write).
        """
        try:
            message = json.loads(line)
        except ValueError:
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return None
        method, params = message.get("method"), message.get("params")
        if "id" not in message:  # a notification (or a client's answer: none is expected yet)
            if self.protocol is None or "method" not in message:
                return None
            if method == "notifications/initialized":
                self.initialized = True
            self.replay.append(line if line.endswith(b"\n") else line + b"\n")
            return b""
        if method == "initialize" and self.protocol is None and _plain_initialize(params):
            assert isinstance(params, dict)
            requested = params["protocolVersion"]
            self.protocol = requested if requested in self.answers["versions"] else self.answers["latest"]
            result = json.loads(json.dumps(self.answers["versions"][self.protocol]["initialize"]))
            result["serverInfo"]["version"] = self.version()
            self.replay.append(_dumps({**message, "id": REPLAY_ID}))
            return _dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if method == "tools/list" and self.initialized and self.protocol is not None and _no_cursor(params):
            result = self.answers["versions"][self.protocol]["tools/list"]
            return _dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return None


def _plain_initialize(params: object) -> bool:
    """An initialize the SDK accepts as it is (a version, capabilities, and who the client is)."""
    if not isinstance(params, dict):
        return False
    client = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and isinstance(client.get("version"), str)
    )


def _no_cursor(params: object) -> bool:
    return params is None or (isinstance(params, dict) and set(params) <= {"_meta"})


def _dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


class _Loader(threading.Thread):
    """Imports the SDK and builds the server, off the thread that answers the handshake."""

    def __init__(self, folder: str) -> None:
        super().__init__(name="mnemolog-mcp-loader", daemon=True)
        self.folder = folder
        self.built: tuple[Any, Callable[[], None]] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            from mnemolog.adapters.store import open_store
            from mnemolog.cli.mcp_server import build_server

            self.built = build_server(open_store, self.folder)  # open_store reads the configured settings
        except BaseException as error:  # re-raised by the thread that serves
            self.error = error

    def server(self) -> tuple[Any, Callable[[], None]]:
        """The built server and its close function, once the import is done."""
        self.join()
        if self.error is not None:
            raise self.error
        assert self.built is not None
        return self.built


def mcp_arguments(args: list[str]) -> dict[str, str | None] | None:
    """``--cwd`` of ``mcp [--cwd DIR]`` as typer would give it; None for anything else (typer's to answer)."""
    if args[:1] != ["mcp"]:
        return None
    rest = args[1:]
    if not rest:
        return {"cwd": None}
    if len(rest) == 1 and rest[0].startswith("--cwd=") and rest[0] != "--cwd=":
        return {"cwd": rest[0].removeprefix("--cwd=")}
    if len(rest) == 2 and rest[0] == "--cwd" and rest[1] and not rest[1].startswith("-"):
        return {"cwd": rest[1]}
    return None


def start(cwd: str | None) -> None:
    """``mnemolog mcp [--cwd DIR]``: check the folder, then serve from it (default: the current folder)."""
    if cwd is not None and not Path(cwd).expanduser().is_dir():
        from mnemolog.cli.output import Exit, UserError
        from rich.markup import escape

        raise UserError(f"not a folder: {escape(cwd)}", Exit.USAGE)
    serve(str(Path(cwd).expanduser().resolve()) if cwd else str(Path.cwd()))


def serve(folder: str) -> None:
    """Serve ``mnemolog mcp`` over this process's stdin and stdout until the client disconnects."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray output of the imports misses the wire (as the SDK does while it serves)
    loader = _Loader(folder)
    loader.start()
    handshake = Handshake(json.loads(ANSWERS.read_text()))
    first: bytes | None = None
    for line in iter(wire_in.readline, b""):
        if not line.strip():
            continue
        answer = handshake.answer(line)
        if answer is None:
            first = line
            break
        if answer:
            wire_out.write(answer)
            wire_out.flush()
    else:  # the client left during the handshake: nothing waits for an answer
        loader.join()
        return
    server, close = loader.server()
    try:
        _hand_over(server, [*handshake.replay, first], wire_in, wire_out, replayed=handshake.protocol is not None)
    finally:
        close()


def _hand_over(server: Any, queued: list[bytes], wire_in: IO[bytes], wire_out: IO[bytes], replayed: bool) -> None:
    """Run the SDK's stdio server on pipes: ``queued`` and then the client's lines in, its lines out (the replay's answer dropped)."""
    to_sdk_read, to_sdk = os.pipe()
    from_sdk, from_sdk_write = os.pipe()
    os.dup2(to_sdk_read, 0)
    os.dup2(from_sdk_write, 1)
    os.close(to_sdk_read)

    def pump_in() -> None:
        with os.fdopen(to_sdk, "wb") as sdk:
            try:
                for line in queued:
                    sdk.write(line)
                sdk.flush()
                for line in iter(wire_in.readline, b""):
                    sdk.write(line)
                    sdk.flush()
            except BrokenPipeError:  # the SDK stopped serving
                pass

    def pump_out() -> None:
        dropping = replayed
        with os.fdopen(from_sdk, "rb") as sdk:
            for line in iter(sdk.readline, b""):
                if line == _END:
                    break
                if dropping and _answers_replay(line):
                    dropping = False
                    continue
                wire_out.write(line)
                wire_out.flush()

    threading.Thread(target=pump_in, name="mnemolog-mcp-in", daemon=True).start()
    out = threading.Thread(target=pump_out, name="mnemolog-mcp-out")
    out.start()
    try:
        server.run("stdio")
    finally:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        # The SDK wrote all it had before it returned; the end line follows it (its own copies of the
        # pipe may outlive the serving, so the end of the pipe would not tell).
        os.write(from_sdk_write, _END)
        os.close(from_sdk_write)
        out.join()


def _answers_replay(line: bytes) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("id") == REPLAY_ID and "method" not in message
