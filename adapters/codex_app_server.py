"""Asking Codex itself to trust mnemolog's hooks, through its app-server (JSON-RPC over stdio).

Codex runs a hook that is not managed only once the person trusted that exact
definition; the trust is a hash Codex computes and records in ``config.toml``
(``[hooks.state."<key>"] trusted_hash``). The hash is Codex's private
algorithm (openai/codex#21615), so mnemolog never computes it: it takes the
route Codex's own ``/hooks`` screen takes, ``hooks/list`` (each hook with its
key, current hash and trust status) then ``config/batchWrite`` (Codex's writer
upserts the hashes). Running ``mnemolog install codex`` is the person's
consent; only handlers whose command is mnemolog's are trusted.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class CodexAppServerError(Exception):
    """Codex's app-server could not be started or answered with an error."""


def _exchange(codex: Path, env: dict[str, str], steps: Callable[[Callable[[str, dict[str, Any]], Any]], Any], timeout: float) -> Any:
    try:
        process = subprocess.Popen(
            [str(codex), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
    except OSError as error:
        raise CodexAppServerError(f"cannot start {codex} app-server: {error}") from error
    timer = threading.Timer(timeout, process.kill)
    timer.start()
    counter = iter(range(1, 1_000_000))
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def call(method: str, params: dict[str, Any]) -> Any:
        number = next(counter)
        stdin.write(json.dumps({"id": number, "method": method, "params": params}) + "\n")
        stdin.flush()
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") != number:
                continue  # a notification
            if "error" in message:
                raise CodexAppServerError(f"{method}: {message['error'].get('message', message['error'])}")
            return message.get("result")
        raise CodexAppServerError(f"{method}: Codex's app-server stopped answering")

    try:
        call("initialize", {"clientInfo": {"name": "mnemolog", "version": "1"}})
        stdin.write(json.dumps({"method": "initialized"}) + "\n")
        stdin.flush()
        return steps(call)
    except (BrokenPipeError, OSError) as error:
        raise CodexAppServerError(f"Codex's app-server: {error}") from error
    finally:
        timer.cancel()
        with contextlib.suppress(OSError):
            stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def trust_hooks(codex: Path, codex_home: Path, cwd: Path, is_ours: Callable[[dict[str, Any]], bool], timeout: float = 60) -> list[str]:
    """Trust, through Codex, every discovered hook ``is_ours`` accepts; returns their keys."""
    env = {**os.environ, "CODEX_HOME": str(codex_home)}

    def steps(call: Callable[[str, dict[str, Any]], Any]) -> list[str]:
        listed = call("hooks/list", {"cwds": [str(cwd)]}) or {}
        hooks = [hook for entry in listed.get("data", []) for hook in entry.get("hooks", [])]
        ours = {hook["key"]: hook["currentHash"] for hook in hooks if is_ours(hook) and hook.get("key") and hook.get("currentHash")}
        untrusted = {key: digest for key, digest in ours.items() if not any(h["key"] == key and h.get("trustStatus") == "trusted" for h in hooks)}
        if untrusted:
            value = {key: {"trusted_hash": digest} for key, digest in untrusted.items()}
            call("config/batchWrite", {"edits": [{"keyPath": "hooks.state", "value": value, "mergeStrategy": "upsert"}]})
        return sorted(ours)

    result: list[str] = _exchange(codex, env, steps, timeout)
    return result
