"""Access to the real session files kept outside the repository in ``../shared/fixtures``.

They were published by other projects as their own test fixtures and must not
be copied here. Without the folder a test skips with the reason, except under
``CI=true``, where the folder's absence fails the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures"


def shared_fixture(rel: str) -> Path:
    """Return ``SHARED / rel``; skip (or fail under ``CI=true``) when it is absent."""
    path = SHARED / rel
    if path.exists():
        return path
    reason = (
        f"shared fixture {rel} not found under {SHARED} "
        "(the real session files live next to the repository, in ../shared/fixtures)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
