"""Running the ``mnemolog`` command as a user would: in this process (fast) or in a subprocess.

``run_cli`` runs the command in process through ``mnemolog.cli.app:main``, so
one-line errors and exit codes are exactly those of the installed command; it
is what a test uses unless the process boundary is what it tests. ``spawn_cli``
runs the installed console script in a subprocess: for packaging, pipes and
signals, concurrency between processes, and what a fresh interpreter imports.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemolog.cli.app import main
from typer._click import formatting
from typer.testing import CliRunner

MNEMOLOG = str(Path(sys.executable).parent / "mnemolog")

# Plain, wide output, as the tests read it (no colours, no wrapping).
_TEST_ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


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
    """Run ``mnemolog ARGS`` in this process with the test's environment plus ``env``.

    stdin, stdout, stderr, the environment and the working folder are the
    command's own for the call and restored afterwards. An exception the CLI
    does not turn into an exit code propagates (a subprocess would print a
    traceback and exit 1). ``timeout`` is accepted for symmetry with
    ``spawn_cli`` and not enforced.
    """
    del timeout
    runner = CliRunner()
    with runner.isolation(input=stdin, env={**_TEST_ENV, **(env or {})}) as (out, err, _):
        formatting.FORCED_WIDTH = None  # help as wide as the script's (isolation forces 80; restores it after)
        with contextlib.chdir(cwd or Path.cwd()):
            try:
                main(list(args))
                code = 0
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
        return Result(code, out.getvalue().decode(), err.getvalue().decode("utf-8", "replace"))


def compiled_env(env: dict[str, str], cache: Path) -> dict[str, str]:
    """``env`` for timing processes as an installed mnemolog runs: with its modules' bytecode.

    A wheel's install compiles the bytecode, and an editable install writes it on
    the first run, unless ``PYTHONDONTWRITEBYTECODE`` is set (as in the sessions
    that develop mnemolog): then every process compiles each module it imports
    from source. Here the bytecode goes to ``cache`` (not the source tree), and
    a first, untimed run of each command writes it.
    """
    compiled = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compiled["PYTHONPYCACHEPREFIX"] = str(cache)
    return compiled


def spawn_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str | None = None, timeout: float = 300) -> Result:
    """Run the installed ``mnemolog ARGS`` in a subprocess with the test's environment plus ``env``."""
    full_env = {**os.environ, **_TEST_ENV, **(env or {})}
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
