"""The store session every entrypoint opens (CLI commands, web requests, MCP tool calls).

It opens the configured store, brings the views up to what other processes
wrote, and hands it to the entrypoint. When the entrypoint ends cleanly and
this process changed memory, it brings every follower in step
(``adapters.followers``: the memory folder, the agents' skill folders), so
what a write changed is on disk when the command returns (guarantee 7). An
entrypoint never follows by hand; a record of serving (the hooks' injection
log) changes nothing that follows, so a read stays a read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mnemolog.adapters.followers import Followed
    from mnemolog.adapters.settings import Settings
    from mnemolog.adapters.store import Store


@contextmanager
def store_session(
    settings: Settings | None = None, *, catch_up: bool = True, opener: Callable[[Settings], Store] | None = None
) -> Iterator[Store]:
    """The configured store for one entrypoint; on a clean exit its followers in step (``settle``); closed afterwards.

    ``catch_up`` False: the views are not caught up first (``rebuild`` replays the whole log anyway).
    ``opener``: how the store is opened (default ``open_store``).
    """
    opened = begin(settings, catch_up=catch_up, opener=opener)
    clean = False
    try:
        yield opened
        clean = True
    finally:
        end(opened, clean)


def begin(
    settings: Settings | None = None, *, catch_up: bool = True, opener: Callable[[Settings], Store] | None = None
) -> Store:
    """Open the store for a session and bring its views to the end of the log (what other processes wrote).

    Servings kept while another process held the log's write lock (``adapters/served_spool.py``) are recorded then.
    """
    from mnemolog.adapters.settings import load_settings
    from mnemolog.adapters.store import open_store

    opened = (opener or open_store)(settings or load_settings())
    try:
        if catch_up:
            opened.catch_up()  # an entrypoint reads what other processes wrote before it started
        if opened.kept_served():  # servings made while another process held the log: recorded now
            from mnemolog.domain.services.injections import record_kept

            record_kept(opened)
    except BaseException:
        opened.close()
        raise
    return opened


def end(store: Store, clean: bool) -> None:
    """End a session: when it ended cleanly, the followers in step (``settle``); the store closed in any case."""
    try:
        if clean:
            settle(store)
    finally:
        store.close()


def settle(store: Store) -> Followed | None:
    """When this process changed memory since the last settle: the followers in step; what was followed (else None).

    For a long-lived process (the MCP server) after each write; the store session calls it on exit.
    The result is kept as ``store.followed`` for the entrypoint's message.
    """
    if store.app.last_changed <= store.followed_at:
        return None
    from mnemolog.adapters.followers import follow

    position = store.app.last_written
    store.followed = follow(store)
    store.followed_at = position
    return store.followed
