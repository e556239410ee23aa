"""The mnemolog command line: thin commands over the pipeline and the store."""

from __future__ import annotations

import sys

import typer
from mnemolog.cli import (
    forget_commands,
    history_commands,
    pipeline_commands,
    read_commands,
    review_commands,
    store_commands,
)
from mnemolog.cli.output import UserError, errors

app = typer.Typer(
    name="mnemolog",
    help="An event-sourced memory store for coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
store_commands.register(app)
pipeline_commands.register(app)
forget_commands.register(app)
history_commands.register(app)
read_commands.register(app)
review_commands.register(app)


def main() -> None:
    """Console entry point: user errors become one line on stderr and an exit code."""
    # typer vendors click: its usage errors are typer._click exceptions, not click's.
    from typer._click.exceptions import ClickException

    try:
        code = app(standalone_mode=False)
    except UserError as error:
        errors.print(f"[red]error:[/red] {error}", highlight=False)
        sys.exit(int(error.code))
    except typer.Abort:
        errors.print("aborted")
        sys.exit(1)
    except ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
