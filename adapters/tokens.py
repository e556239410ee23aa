"""Token counting with the real o200k_base tokenizer (``bpe_openai`` ships its vocabulary).

The tokenizer refuses inputs of a million characters or more and results of
more than 200,000 tokens in one call, so long texts are encoded in chunks cut
after a newline (where the pre-tokenizer splits anyway), which keeps the count
exact for line-oriented text and within a token or two per chunk otherwise.
Special-token strings such as ``<|endoftext|>`` are counted as plain text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

ENCODING_NAME = "o200k_base"
_CHUNK_CHARS = 50_000  # ≤ 4 bytes a char → ≤ 200k tokens, the tokenizer's limit

__all__ = ["ENCODING_NAME", "TOKENIZER", "CachedTokenizer", "O200kTokenizer", "count_tokens", "encode", "tail_to_tokens", "truncate_to_tokens"]


@lru_cache(maxsize=1)
def _encoding() -> Any:
    """The Rust tokenizer of ``bpe_openai`` for o200k_base, loaded without the package's ``__init__``.

    Importing ``bpe_openai`` builds a registry of every model it knows, which
    reads three vocabularies (~0.7 s); the extension module alone loads only
    o200k_base (~0.06 s). The SessionStart hook counts its context with it, so
    that difference is most of the hook's time. Counts are the same as
    ``bpe_openai.get_encoding("o200k_base").encode_ordinary`` (special-token
    strings are plain text for both).
    """
    import importlib.util
    from importlib.machinery import ExtensionFileLoader
    from pathlib import Path

    package = importlib.util.find_spec("bpe_openai")
    if package is None or package.origin is None:
        raise ModuleNotFoundError("bpe_openai is not installed")
    binary = next(Path(package.origin).parent.glob("_bindings*.so"), None) or next(Path(package.origin).parent.glob("_bindings*.pyd"))
    loader = ExtensionFileLoader("bpe_openai._bindings", str(binary))
    spec = importlib.util.spec_from_file_location("bpe_openai._bindings", str(binary), loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module.tokenizer_for_encoding(ENCODING_NAME)


def _decode_prefix(tokens: list[int]) -> str:
    # A cut can fall inside a character (several tokens per character): drop tokens until it decodes.
    encoding = _encoding()
    for end in range(len(tokens), max(len(tokens) - 4, 0) - 1, -1):
        try:
            return str(encoding.decode(tokens[:end]))
        except ValueError:
            continue
    return ""


def _decode_suffix(tokens: list[int]) -> str:
    encoding = _encoding()
    for start in range(0, min(4, len(tokens)) + 1):
        try:
            return str(encoding.decode(tokens[start:]))
        except ValueError:
            continue
    return ""


def _chunks(text: str) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = start + _CHUNK_CHARS
        if end < len(text):
            newline = text.rfind("\n", start, end)
            if newline > start:
                end = newline + 1
        yield text[start:end]
        start = end


def encode(text: str) -> list[int]:
    """Token ids of ``text`` (special-token strings encoded as ordinary text)."""
    encoding = _encoding()
    tokens: list[int] = []
    for chunk in _chunks(text):
        tokens.extend(encoding.encode(chunk))
    return tokens


def count_tokens(text: str) -> int:
    """How many o200k_base tokens ``text`` takes."""
    if not text:
        return 0
    encoding = _encoding()
    if len(text) <= _CHUNK_CHARS:  # one chunk (every context line a view counts)
        return int(encoding.count(text))
    return sum(int(encoding.count(chunk)) for chunk in _chunks(text))


def truncate_to_tokens(text: str, n: int) -> str:
    """The longest prefix of ``text`` that fits in ``n`` tokens (never splits a character)."""
    if n <= 0:
        return ""
    tokens = encode(text)
    if len(tokens) <= n:
        return text
    return _decode_prefix(tokens[:n])


def tail_to_tokens(text: str, n: int) -> str:
    """The longest suffix of ``text`` that fits in ``n`` tokens (never splits a character)."""
    if n <= 0:
        return ""
    tokens = encode(text)
    if len(tokens) <= n:
        return text
    return _decode_suffix(tokens[-n:])


class O200kTokenizer:
    """The domain's Tokenizer port over o200k_base."""

    encoding = ENCODING_NAME  # the views count context lines in this encoding too

    def count(self, text: str) -> int:
        """How many tokens ``text`` takes."""
        return count_tokens(text)

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` within ``tokens`` tokens."""
        return truncate_to_tokens(text, tokens)


TOKENIZER = O200kTokenizer()


class CachedTokenizer(O200kTokenizer):
    """o200k counts remembered in a small JSON file, so a read that counts the same texts again
    (the read-path instructions, the user profile, the closing line) does not load the tokenizer.

    Keys are SHA-256 digests of the texts (no text is written); the file keeps
    the ``MAX_ENTRIES`` most recent counts and is rewritten only when it learns one.
    """

    MAX_ENTRIES = 512

    def __init__(self, path: Path) -> None:
        self.path = path
        self._counts: dict[str, int] | None = None

    def _load(self) -> dict[str, int]:
        if self._counts is None:
            try:
                loaded = json.loads(self.path.read_text())
                self._counts = {str(k): int(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._counts = {}
        return self._counts

    def count(self, text: str) -> int:
        """How many tokens ``text`` takes (from the file when it was counted before)."""
        key = hashlib.sha256(text.encode()).hexdigest()
        counts = self._load()
        if key in counts:
            return counts[key]
        tokens = count_tokens(text)
        counts[key] = tokens
        while len(counts) > self.MAX_ENTRIES:
            del counts[next(iter(counts))]
        with contextlib.suppress(OSError):  # a read-only home only costs the next read a tokenizer
            self.path.parent.mkdir(parents=True, exist_ok=True)
            scratch = self.path.with_suffix(".tmp")
            scratch.write_text(json.dumps(counts))
            scratch.chmod(0o600)  # digests of memory's texts: the owner's, as the store is
            scratch.replace(self.path)
        return tokens

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` within ``tokens`` tokens (no tokenizer when it fits whole)."""
        return text if self.count(text) <= tokens else truncate_to_tokens(text, tokens)
