"""Plain command lines read without typer, for the commands agents run at every turn.

typer builds its parameters with pydantic type adapters on every run and costs
about as much as opening the store. ``context --hook`` (the agents' hooks)
and ``search`` (what the served instructions tell agents to run) read their
options here when the command line is plain: each known option once,
values as typer takes them, no help, no abbreviation. Anything else (help, an
unknown or repeated option, a missing or odd value) gets None, and typer
answers it with the same usage error or help as always.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def plain_arguments(
    args: list[str],
    command: str,
    flags: Mapping[str, str],
    values: Mapping[str, str],
    defaults: Mapping[str, Any],
    *,
    positional: str | None = None,
    numbers: tuple[str, ...] = (),
    paths: tuple[str, ...] = (),
) -> dict[str, Any] | None:
    """The keyword arguments of ``command``'s function as typer would give them; None for anything typer must answer.

    ``flags`` and ``values`` map each option to its parameter; ``positional``
    names the one argument a command takes (required); ``numbers`` are
    parameters given as plain digits, ``paths`` those given as paths.
    """
    if args[:1] != [command]:
        return None
    given = dict(defaults)
    seen: set[str] = set()
    rest = iter(args[1:])
    for arg in rest:
        name, _, inline = arg.partition("=")
        if positional is not None and not arg.startswith("-") and positional not in given:
            given[positional] = arg
            continue
        if name in seen or not ((name in flags and "=" not in arg) or name in values):
            return None  # repeated, unknown, --help, a second argument, a flag given a value: typer's to answer
        seen.add(name)
        if name in flags:
            given[flags[name]] = True
            continue
        value = inline if "=" in arg else next(rest, None)
        if value is None or value == "" or value.startswith("-"):
            return None  # a missing value (or an option where a value belongs): typer's usage error
        given[values[name]] = value
    if positional is not None and positional not in given:
        return None  # typer's "missing argument"
    for name in numbers:
        if given.get(name) is not None:
            if not (given[name].isascii() and given[name].isdigit()):
                return None  # typer's conversion (and its error) for anything but plain digits
            given[name] = int(given[name])
    for name in paths:
        if given.get(name) is not None:
            given[name] = Path(given[name])
    return given
