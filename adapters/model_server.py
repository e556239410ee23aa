"""What an OpenAI-compatible server says about itself: which server, which models, the context window.

llama.cpp's server reports the context of a slot in ``GET /props``
(``default_generation_settings.n_ctx``) and the model's in ``GET /v1/models``
(``meta.n_ctx``); vLLM reports ``max_model_len`` in ``/v1/models``; Ollama
answers ``GET /api/version`` and keeps the context to itself (its
``num_ctx``, default 2048 to 4096 tokens, unless set on the model). A hosted
API says nothing of it. Each probe is one short GET; a server that does not
answer one just leaves that fact unknown.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class ServerInfo:
    """The facts a server gave about itself (empty when it gave none)."""

    kind: str = "unknown"  # "llama.cpp" | "vllm" | "ollama" | "openai" | "unknown"
    models: tuple[str, ...] = ()
    context_window: int | None = None
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "models": list(self.models), "context_window": self.context_window}


def is_local(base_url: str | None) -> bool:
    """True for a server on this machine or a private network (one request at a time by default)."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    if host in ("localhost", "host.docker.internal") or host.endswith(".local"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _root(base_url: str) -> str:
    """The server root of a base URL (``http://h:8080/v1`` -> ``http://h:8080``)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def _get(url: str, headers: dict[str, str]) -> Any:
    """The JSON a GET answers, or None for any failure (the fact stays unknown)."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT) as response:
            if response.status != 200:
                return None
            return json.loads(response.read(1_000_000))
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


@lru_cache(maxsize=16)
def discover(base_url: str | None, api_key: str | None = None) -> ServerInfo:
    """Ask the server at ``base_url`` what it is and how large its context window is (cached per process)."""
    if not base_url:
        return ServerInfo(kind="openai")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    listed = _get(base_url.rstrip("/") + "/models", headers)
    props = _get(_root(base_url) + "/props", headers)
    kind, context = "unknown", None
    models: tuple[str, ...] = ()
    data = listed.get("data") if isinstance(listed, dict) else None
    if isinstance(data, list):
        models = tuple(str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id"))
        first = data[0] if data and isinstance(data[0], dict) else {}
        meta = first.get("meta") if isinstance(first.get("meta"), dict) else {}
        if _positive(meta.get("n_ctx")):
            kind, context = "llama.cpp", _positive(meta.get("n_ctx"))
        elif _positive(first.get("max_model_len")):
            kind, context = "vllm", _positive(first.get("max_model_len"))
        elif first.get("owned_by") == "llamacpp":
            kind = "llama.cpp"
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        kind, context = "llama.cpp", _positive(settings.get("n_ctx"))  # a slot's share: what one request gets
    if kind == "unknown":
        version = _get(_root(base_url) + "/api/version", headers)
        if isinstance(version, dict) and "version" in version:
            kind = "ollama"
    return ServerInfo(kind=kind, models=models, context_window=context)
