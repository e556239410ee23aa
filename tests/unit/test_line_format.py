"""The lines whose token counts the views store keep their format, or ``schema.LINE_FORMAT`` is raised.

Items store the tokens of their context line and of their memory_summary.md
line; views built under another ``LINE_FORMAT`` are rebuilt on open. This test
fingerprints the source of every function those lines are written by: when it
fails, the lines changed. Raise ``LINE_FORMAT`` and record the new fingerprint
under it in ``RECORDED`` (the old views are then rebuilt).
"""

from __future__ import annotations

import hashlib
import inspect

from mnemolog.domain import context_lines as lines
from mnemolog.projections import markdown_folder as folder
from mnemolog.projections.schema import LINE_FORMAT

RECORDED = {1: "7fb41c78e36caf8b", 2: "c76ebbdb406fa571"}  # 2: the context line moved to domain.context_lines

WRITERS = (
    lines.line_for,
    lines.context_line,
    lines.shorten,
    lines.one_line,
    folder.summary_line,
    folder._summary_bullet,
    folder._tip_line,
    folder._topic_line,
    folder._short,
    folder._inline,
    folder.strip_bold,
    folder.code_span_flags,
    folder._unbold,
    folder._marker,
    folder._group_name,
    folder._scope_suffix_text,
    folder._label,
)


def fingerprint() -> str:
    """The SHA-256 of the writers' source, in order."""
    return hashlib.sha256("\n".join(inspect.getsource(f) for f in WRITERS).encode()).hexdigest()[:16]


def test_the_stored_lines_format_is_the_recorded_one() -> None:
    assert fingerprint() == RECORDED.get(LINE_FORMAT), (
        "the context or summary line changed: raise schema.LINE_FORMAT and record fingerprint() under it in RECORDED"
    )
