"""Before/after of an edit as a word diff (difflib): what the page marks deleted and inserted."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import NamedTuple

_WORDS = re.compile(r"\s+|[^\s]+")


class Piece(NamedTuple):
    """A run of text: ``same``, ``deleted`` (only before) or ``inserted`` (only after)."""

    change: str
    text: str


def word_diff(before: str | None, after: str | None) -> list[Piece]:
    """The pieces that turn ``before`` into ``after``, word by word (whitespace kept)."""
    old, new = _WORDS.findall(before or ""), _WORDS.findall(after or "")
    pieces: list[Piece] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            pieces.append(Piece("same", "".join(old[i1:i2])))
            continue
        if i2 > i1:
            pieces.append(Piece("deleted", "".join(old[i1:i2])))
        if j2 > j1:
            pieces.append(Piece("inserted", "".join(new[j1:j2])))
    return pieces
