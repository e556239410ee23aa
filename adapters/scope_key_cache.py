"""The redacted scope key of every project seen before, kept in the home folder.

A scope key that may hold a secret (a long folder or repository name, a
``user:token@`` remote) is redacted before it is used, and the redaction rules
take about a tenth of a second to load (detect-secrets' plugins, the RE2
prefilter). A folder's scope is asked for at every session start (the
SessionStart hook), so the answer is kept: ``scope_keys.json`` maps a keyed
hash of each key as it was before redaction (never the key itself: it may hold
the secret) to its redacted form. The hash covers the rules' identity too (the
files that define them), so a changed rule set redacts again; a key never
seen is redacted and added. The file is only a shortcut: when it cannot be
read or written, the key is redacted as before.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Callable
from pathlib import Path

from mnemolog.adapters.home import resolve_home

CACHE_FILE = "scope_keys.json"
LIMIT = 512  # keys kept (the oldest go first)


def redacted_scope_key(key: str, redact: Callable[[str], str] | None = None, home: Path | None = None) -> str:
    """``key`` with its secrets redacted (``redact``, default the redaction rules), remembered for the next time."""
    path = (home or resolve_home()) / CACHE_FILE
    cache = _load(path)
    salt = cache.get("salt")
    keys = cache.get("keys")
    if not isinstance(salt, str) or not isinstance(keys, dict):
        import secrets

        salt, keys = secrets.token_hex(32), {}
    digest = hmac.new(bytes.fromhex(salt), f"{rules_identity()}\0{key}".encode(), hashlib.sha256).hexdigest()
    found = keys.get(digest)
    if isinstance(found, str):
        return found
    clean = (redact or _redact)(key)
    keys[digest] = clean
    while len(keys) > LIMIT:
        del keys[next(iter(keys))]
    _save(path, {"salt": salt, "keys": keys})
    return clean


def _redact(key: str) -> str:
    from mnemolog.adapters.redaction import redact

    return redact(key)[0]


def rules_identity() -> str:
    """What the redaction rules are made of, as file sizes and times: ours and detect-secrets' installed plugins."""
    from importlib.util import find_spec

    here = Path(__file__).parent
    files = [here / "redaction.py", here / "redaction_prefilter.py"]
    spec = find_spec("detect_secrets")
    if spec is not None and spec.origin:
        package = Path(spec.origin).parent
        files += [*sorted((package / "plugins").glob("*.py")), package / "core" / "plugins" / "util.py", package / "__version__.py"]
    parts = []
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            parts.append(f"{file.name}:-")
            continue
        parts.append(f"{file}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _load(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, data: dict[str, object]) -> None:
    if not path.parent.is_dir():
        return  # no home yet: nothing to keep it in
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(temporary, path)  # another process's write is replaced whole, never mixed
    except OSError:
        temporary.unlink(missing_ok=True)
