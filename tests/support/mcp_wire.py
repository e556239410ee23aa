"""The MCP SDK's own answers to the handshake, read off the wire (``cli/mcp_handshake.json`` holds them).

``python tests/support/mcp_wire.py`` writes that file again, after a tool or the SDK changed
(tests/integration/test_mcp_handshake.py says when).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from mnemolog.cli.mcp_handshake import ANSWERS

CLIENT = {"name": "mnemolog-tests", "version": "1"}


def initialize(version: str, request_id: int | str = 1) -> dict[str, Any]:
    """A client's initialize request for protocol ``version``."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tools_list(request_id: int | str = 2) -> dict[str, Any]:
    """A client's tools/list request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}


def exchange(command: list[str], messages: list[dict[str, Any]], env: dict[str, str] | None = None, timeout: float = 60) -> list[dict[str, Any]]:
    """The answers of a server started with ``command`` to the requests among ``messages``, in order.

    Its input stays open until every request is answered (at end of input a server may drop what is in flight).
    """
    waiting = sum(1 for m in messages if "id" in m)
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        process.stdin.flush()
        answers: list[dict[str, Any]] = []
        while len(answers) < waiting:
            line = process.stdout.readline()
            assert line, f"the server ended before answering: {process.stderr.read()[-3000:] if process.stderr else ''}"
            message = json.loads(line)
            if "id" in message and "method" not in message:
                answers.append(message)
        process.stdin.close()
        assert process.wait(timeout) == 0
        return answers
    finally:
        process.kill()
        process.wait()


def sdk_answers() -> dict[str, Any]:
    """What the SDK answers, per handshake protocol version: initialize (its version left blank) and tools/list."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    versions: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "MNEMOLOG_HOME": home}
        # The SDK alone, without the early handshake.
        command = [sys.executable, "-c", "import sys; from mnemolog.cli.mcp_server import run_stdio; run_stdio(sys.argv[1])", home]
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            init, tools = exchange(command, [initialize(version), INITIALIZED, tools_list()], env)
            init["result"]["serverInfo"]["version"] = ""
            versions[version] = {"initialize": init["result"], "tools/list": tools["result"]}
    return {"latest": LATEST_HANDSHAKE_VERSION, "versions": versions}


if __name__ == "__main__":
    ANSWERS.write_text(json.dumps(sdk_answers(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {ANSWERS}")
