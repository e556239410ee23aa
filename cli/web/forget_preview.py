"""What a forget would do, before it is done (placeholder until the dry-run service lands)."""

from __future__ import annotations

from typing import Any


def preview_forget(store: Any, what: str, target: str, scope: str) -> dict[str, Any]:
    """Placeholder."""
    return {"summary": "preview not available yet", "items": [], "sessions": [], "other": ""}
