"""Opening the store for a command (one place, so every command fails the same way).

Cheap to import (the store's modules load when a store is opened), so command
modules may import it at top level.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mnemolog.cli.output import UserError

if TYPE_CHECKING:
    from mnemolog.adapters.bootstrap import Store


@contextmanager
def store(catch_up: bool = True) -> Iterator[Store]:
    """The configured store, caught up with the log (unless ``catch_up`` is False), closed afterwards."""
    from mnemolog.adapters.bootstrap import NOTICES, StoreError, open_store
    from mnemolog.adapters.settings import load_settings
    from mnemolog.cli.output import environment_failure, errors

    try:
        opened = open_store(load_settings())
    except StoreError as error:
        raise UserError(environment_failure(error) or str(error)) from error
    except Exception as error:  # settings that do not validate
        raise UserError(f"invalid configuration: {error}") from error
    for notice in NOTICES:
        errors.print(f"warning: {notice}", highlight=False, markup=False)
    NOTICES.clear()
    try:
        if catch_up:  # `rebuild` replays the whole log anyway: catching up first would replay it twice
            opened.catch_up()  # a command reads what other processes wrote before it started
        yield opened
    finally:
        opened.close()
