"""Token counting with the real o200k_base tokenizer (``bpe_openai`` ships its vocabulary).

The tokenizer refuses inputs of a million characters or more and results of
more than 200,000 tokens in one call, so long texts are encoded in chunks cut
after a newline (where the pre-tokenizer splits anyway), which keeps the count
exact for line-oriented text and within a token or two per chunk otherwise.
Special-token strings such as ``<|endoftext|>`` are counted as plain text.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

ENCODING_NAME = "o200k_base"
_CHUNK_CHARS = 50_000  # ≤ 4 bytes a char → ≤ 200k tokens, the tokenizer's limit

__all__ = ["ENCODING_NAME", "TOKENIZER", "O200kTokenizer", "count_tokens", "encode", "tail_to_tokens", "truncate_to_tokens"]


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai  # imported on first use: it costs ~0.5 s at start-up

    return bpe_openai.get_encoding(ENCODING_NAME)


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
        tokens.extend(encoding.encode_ordinary(chunk))
    return tokens


def count_tokens(text: str) -> int:
    """How many o200k_base tokens ``text`` takes."""
    if not text:
        return 0
    encoding = _encoding()
    return sum(len(encoding.encode_ordinary(chunk)) for chunk in _chunks(text))


def truncate_to_tokens(text: str, n: int) -> str:
    """The longest prefix of ``text`` that fits in ``n`` tokens (never splits a character)."""
    if n <= 0:
        return ""
    tokens = encode(text)
    if len(tokens) <= n:
        return text
    data: bytes = _encoding().decode_bytes(tokens[:n])
    return data.decode("utf-8", errors="ignore")


def tail_to_tokens(text: str, n: int) -> str:
    """The longest suffix of ``text`` that fits in ``n`` tokens (never splits a character)."""
    if n <= 0:
        return ""
    tokens = encode(text)
    if len(tokens) <= n:
        return text
    data: bytes = _encoding().decode_bytes(tokens[-n:])
    return data.decode("utf-8", errors="ignore")


class O200kTokenizer:
    """The domain's Tokenizer port over o200k_base."""

    def count(self, text: str) -> int:
        """How many tokens ``text`` takes."""
        return count_tokens(text)

    def truncate(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` within ``tokens`` tokens."""
        return truncate_to_tokens(text, tokens)


TOKENIZER = O200kTokenizer()
