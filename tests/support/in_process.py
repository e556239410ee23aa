"""Running ``mnemolog`` inside the test process, through its real entry point (faster than a subprocess).

For CLI tests where the process boundary is not what is tested: the same
``main`` as the installed command (one-line errors, exit codes), with stdin,
stdout, stderr and the environment swapped for the call.
"""

from __future__ import annotations

import sys

from mnemolog.cli.app import main
from typer.testing import CliRunner

from support.cli import Result


def run_in_process(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Result:
    """Run ``mnemolog ARGS`` in this process with the test's environment plus ``env``."""
    code = 0
    with CliRunner().isolation(input=stdin, env={"COLUMNS": "200", "NO_COLOR": "1", **(env or {})}) as (out, err, _):
        argv, sys.argv = sys.argv, ["mnemolog", *args]
        try:
            main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        finally:
            sys.argv = argv
            sys.stdout.flush()
            sys.stderr.flush()
        return Result(code, out.getvalue().decode(), err.getvalue().decode())
