"""The words that make something the user's own in every project ("for all my projects", "I always", ...).

One rule for every place that reads a user's words: a preference in a
transcript (the offline extractor and consolidator scope it globally) and a
note left without a chosen scope (``services.notes.add_note`` records it
user-wide).
"""

from __future__ import annotations

import re

USER_WIDE = re.compile(
    r"\b(for|in|across)\s+(all|every one of)\s+(of\s+)?my\s+(projects|repos|repositories|code)\b"
    r"|\bacross\s+(all\s+)?projects\b|\bin\s+every\s+(project|repo)\b|\bfor\s+every\s+(project|repo)\b"
    r"|\bin\s+general\b|\bi\s+always\b|\beverywhere\b|\bgenerally\s+i\b",
    re.IGNORECASE,
)
"""Wording that makes a statement the user's own, in every project."""


def is_user_wide(text: str) -> bool:
    """Whether ``text`` says it holds for every project ("for all my projects", "in general", "I always", ...)."""
    return bool(USER_WIDE.search(text))
