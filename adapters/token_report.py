"""What phase 1 would send for a session, against Codex's plain serialisation.

Used by ``mnemolog tokens``: per session, the tokens of mnemolog's rendering,
the tokens Codex's plain JSON serialisation would have sent, and a check that
no user message and no error line was lost on the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mnemolog.adapters.redaction import redact_transcript
from mnemolog.adapters.session_files import read_session
from mnemolog.adapters.transcript_rendering import (
    ERROR_LINE,
    plain_codex_tokens,
    plain_codex_tokens_from_file,
    render_for_model,
)
from mnemolog.domain.transcript import ItemKind, Transcript


@dataclass(frozen=True)
class TokenReport:
    """One session's numbers."""

    path: str
    source: str
    native_id: str
    plain_tokens: int
    rendered_tokens: int
    user_messages: int
    user_messages_kept: int
    error_lines: int
    error_lines_kept: int

    @property
    def ratio(self) -> float:
        """Rendered tokens as a fraction of the plain serialisation."""
        return self.rendered_tokens / self.plain_tokens if self.plain_tokens else 1.0

    @property
    def lossless(self) -> bool:
        """True when every user message and every error line survived."""
        return self.user_messages_kept == self.user_messages and self.error_lines_kept == self.error_lines


def _error_lines(transcript: Transcript) -> list[str]:
    lines = []
    for item in transcript.items:
        if item.kind is not ItemKind.TOOL_OUTPUT:
            continue
        for line in item.text.splitlines():
            if ERROR_LINE.search(line) and line.strip():
                lines.append(line.strip()[:200])
    return lines


def token_report(path: Path, budget_tokens: int) -> TokenReport:
    """Measure one session file (raises SessionReadError for an unreadable file)."""
    transcript, _ = redact_transcript(read_session(path))
    rendered = render_for_model(transcript, budget_tokens)
    if transcript.meta.source == "codex":
        plain = plain_codex_tokens_from_file(path)
    else:
        plain = plain_codex_tokens(transcript)
    users = [i.text.strip() for i in transcript.items if i.kind is ItemKind.USER and i.text.strip()]
    errors = _error_lines(transcript)
    return TokenReport(
        path=str(path),
        source=transcript.meta.source,
        native_id=transcript.meta.native_id,
        plain_tokens=plain,
        rendered_tokens=rendered.tokens,
        user_messages=len(users),
        user_messages_kept=sum(1 for u in users if u in rendered.text),
        error_lines=len(errors),
        error_lines_kept=sum(1 for e in errors if e in rendered.text),
    )
