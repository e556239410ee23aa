"""Phase 1's output contract: what a model (or the offline extractor) returns for one session."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StageOneOutput(BaseModel):
    """Codex's stage-1 fields, kept so a Codex user recognises the output.

    All three empty means "nothing worth remembering".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rollout_summary: str = Field(description="What happened in the session, for a future reader.")
    rollout_slug: str | None = Field(description="A few words naming the task, or null.")
    raw_memory: str = Field(
        description="Front matter (description, task, task_group, task_outcome, cwd, keywords) "
        "then '### Task n' blocks with Preference signals, Reusable knowledge, "
        "Failures and how to do differently, Procedure (the shell commands run, in order, "
        "each '- `command` -> ok' or '- `command` -> failed (exit N: error line)'), References."
    )

    @property
    def is_empty(self) -> bool:
        """True when the model found nothing worth remembering."""
        return not (self.rollout_summary.strip() or self.raw_memory.strip() or (self.rollout_slug or "").strip())


class TokenUsage(BaseModel):
    """Token usage reported by a model call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0


class ExtractionAnswer(BaseModel):
    """One model's answer for one session, with the facts the log records about it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: StageOneOutput
    model: str
    prompt_hash: str
    usage: TokenUsage = TokenUsage()
    input_tokens_plain: int | None = None  # what Codex's plain serialisation would have sent
