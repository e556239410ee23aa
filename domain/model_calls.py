"""Sessions that were mnemolog's own model calls (an agent CLI run as a model) never become memory.

Every prompt mnemolog gives an agent CLI (``claude -p``, ``codex exec``) starts
with ``MODEL_CALL_MARKER``. The CLIs are told not to write a session file; if
one is written anyway, ingest recognises the marker and never records it.
"""

from __future__ import annotations

from mnemolog.domain.transcript import ItemKind, Transcript

MODEL_CALL_MARKER = "[mnemolog-model-call: a structured-output request from mnemolog, not a coding session]"


def is_model_call(transcript: Transcript) -> bool:
    """True when the session's first user message is a prompt mnemolog sent to an agent CLI."""
    first = transcript.meta.first_user_message
    if first is not None and MODEL_CALL_MARKER in first:
        return True
    for item in transcript.items:
        if item.kind == ItemKind.USER:
            return MODEL_CALL_MARKER in item.text
    return False
