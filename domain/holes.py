"""No re-learning with holes: text a tombstone cut (or an erase destroyed) feeds no memory.

A scrubbed text keeps a mark where the value was (``[forgotten]``, or
``[erased]`` where a key was destroyed). Learning from such a line gives
memory with a hole in it ("Always use [forgotten] for tests"): useless, and it
still says that something was there. So every line that holds a mark is left
out of what a model reads (phase 1's transcript, phase 2's inputs and notes)
and of what a model wrote (phase 1's answer); an edit that still carries a
mark is dropped, and an item that does is retired.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mnemolog.domain.sealing import ERASED
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK

if TYPE_CHECKING:  # the transcript's pydantic models: not loaded by the reads that check marks
    from mnemolog.domain.transcript import Transcript

MARKS = (FORGOTTEN_MARK, ERASED)


def has_hole(text: str | None) -> bool:
    """True when ``text`` holds a mark where a forgotten or erased value was."""
    return bool(text) and any(mark in (text or "") for mark in MARKS)


def without_holes(text: str) -> str:
    """``text`` without the lines that hold a mark (the text itself when none does)."""
    if not has_hole(text):
        return text
    return "\n".join(line for line in text.split("\n") if not has_hole(line)).strip("\n")


def transcript_without_holes(transcript: Transcript) -> Transcript:
    """The transcript a model is shown: lines with a mark left out, items left empty dropped."""
    items = []
    changed = False
    for item in transcript.items:
        if not has_hole(item.text):
            items.append(item)
            continue
        changed = True
        text = without_holes(item.text)
        if text.strip():
            items.append(item.model_copy(update={"text": text}))
    meta = transcript.meta
    if has_hole(meta.first_user_message):
        changed = True
        meta = meta.model_copy(update={"first_user_message": without_holes(meta.first_user_message or "") or None})
    if not changed:
        return transcript
    return transcript.model_copy(update={"items": tuple(items), "meta": meta})
