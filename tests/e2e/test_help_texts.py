"""Every command's --help prints its help as written: brackets such as [item:<id>] are shown literally."""

from __future__ import annotations

import re

import pytest
from mnemolog.cli.app import COMMANDS
from mnemolog.cli.command_group import module_commands
from support.cli import run_cli


def written_help(name: str) -> list[str]:
    """The command's own help and its parameters' helps, as the source writes them."""
    command = module_commands(COMMANDS[name].module).commands[name]
    texts = [command.help or ""]
    texts += [getattr(param, "help", None) or "" for param in command.params]
    return [t for t in texts if t]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_shows_every_bracket_literally(name: str) -> None:
    shown = run_cli(name, "--help")
    assert shown.code == 0, shown.err
    flat = " ".join(shown.out.split())
    for text in written_help(name):
        for bracket in re.findall(r"\[[^\]\s]*:[^\]\s]*\]", text):  # [item:<id>] and the like
            assert bracket in flat, f"{name} --help lost {bracket}"
    assert " ".join(COMMANDS[name].help.split()) in flat


def test_the_commands_that_take_an_item_say_it_may_be_a_marker_or_a_prefix() -> None:
    for name in ("show", "review", "edit", "pin", "scope"):
        flat = " ".join(run_cli(name, "--help").out.split())
        assert "[item:<id>]" in flat and "prefix" in flat, name
