"""Where mnemolog keeps its files: ``$MNEMOLOG_HOME``, else the platform's user data folder.

Without pydantic (``adapters.settings`` re-exports it): the read path's start
finds the home before any settings are loaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def resolve_home(env: Mapping[str, str] | None = None) -> Path:
    """``$MNEMOLOG_HOME``, else the platform's user data folder."""
    env = os.environ if env is None else env
    home = env.get("MNEMOLOG_HOME")
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("mnemolog"))
