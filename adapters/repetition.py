"""Telling a looping answer from a long one, while it streams.

Small models under a JSON grammar often fall into a loop: the same keyword,
the same sentence, or whitespace, over and over until the output cap. An
answer loops when its tail is one piece repeated back to back, covering at
least ``MIN_SPAN`` characters and at least ``MIN_REPEATS`` times; genuine
JSON with similar edits never repeats a span that long exactly.
"""

from __future__ import annotations

MIN_SPAN = 400
MIN_REPEATS = 6
MAX_PERIOD = 200


def loop_period(text: str) -> int | None:
    """The length of the piece the end of ``text`` keeps repeating, or None when it does not loop."""
    for period in range(1, MAX_PERIOD + 1):
        repeats = max(MIN_REPEATS, -(-MIN_SPAN // period))
        span = period * repeats
        if span > len(text):
            continue
        piece = text[-period:]
        if text[-span:] == piece * repeats:
            return period
    return None
