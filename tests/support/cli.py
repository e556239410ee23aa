"""Running the installed ``mnemolog`` command as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MNEMOLOG = str(Path(sys.executable).parent / "mnemolog")


@dataclass
class Result:
    """What a command printed and how it exited."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        """Parse stdout as JSON."""
        return json.loads(self.out)


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None, timeout: float = 300) -> Result:
    """Run ``mnemolog ARGS`` in a subprocess with the test's environment plus ``env``."""
    full_env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    done = subprocess.run(
        [MNEMOLOG, *args],
        env=full_env,
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(done.returncode, done.stdout, done.stderr)
