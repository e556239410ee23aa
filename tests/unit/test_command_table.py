"""The table of commands ``mnemolog --help`` lists without importing them matches the commands."""

from __future__ import annotations

import importlib
from pathlib import Path

import typer
import typer.main
from mnemolog.cli.app import COMMANDS

CLI = Path(__file__).resolve().parents[2] / "cli"


def registered() -> dict[str, tuple[str, str]]:
    """Every command each ``cli/*_commands.py`` registers: name -> (module, first paragraph of help)."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted(CLI.glob("*_commands.py")):
        commands = typer.Typer()
        importlib.import_module(f"mnemolog.cli.{path.stem}").register(commands)
        for name, command in typer.main.get_group(commands).commands.items():
            assert name not in found, f"{name} is registered by {found[name][0]} and {path.stem}"
            found[name] = (path.stem, (command.help or "").split("\n\n")[0].strip())
    return found


def test_every_command_is_in_the_table_with_its_module_and_help() -> None:
    table = {name: (entry.module, entry.help) for name, entry in COMMANDS.items()}
    assert table == registered(), "cli/app.py: COMMANDS must list every command, its module and its help's first paragraph"
