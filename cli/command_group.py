"""The typer application of the ``mnemolog`` command: a group that loads a command's module when it runs.

``mnemolog --help`` lists the commands from ``cli/app.py: COMMANDS`` without
importing any command module. Help is rendered by click's plain formatter
(``rich_markup_mode=None``): rich is not imported to print help, and help texts
may contain brackets such as ``[item:<id>]``.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

import typer
from mnemolog.cli.app import COMMANDS
from typer.core import TyperGroup

_SETTINGS: dict[str, Any] = {"add_completion": False, "pretty_exceptions_enable": False, "rich_markup_mode": None}


@cache
def module_commands(module: str) -> TyperGroup:
    """The click commands one command module registers (built once per process)."""
    commands = typer.Typer(**_SETTINGS)
    importlib.import_module(f"mnemolog.cli.{module}").register(commands)
    return typer.main.get_group(commands)


class LazyCommands(TyperGroup):
    """The top-level group: lists COMMANDS, imports a command's module only when it runs."""

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command name, in the order --help lists them."""
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command NAME, loading its module; None for an unknown name (click reports it)."""
        entry = COMMANDS.get(cmd_name)
        return None if entry is None else module_commands(entry.module).commands.get(cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of --help, from COMMANDS (no module is imported)."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, entry.help) for name, entry in COMMANDS.items()])


app = typer.Typer(
    name="mnemolog",
    help="An event-sourced memory store for coding agents.",
    no_args_is_help=True,
    cls=LazyCommands,
    **_SETTINGS,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("mnemolog")
        except PackageNotFoundError:  # run from a checkout that was never installed
            number = "unknown"
        typer.echo(f"mnemolog {number}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", help="Print mnemolog's version and exit.", callback=_print_version, is_eager=True),
) -> None:
    # A group needs a callback; the commands come from LazyCommands.
    del show_version


