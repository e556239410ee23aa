"""Catching the views up when another process is doing the same."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, OperationalError, Tracking
from mnemolog.adapters.store import Store
from mnemolog.projections.view_store import catch_up
from support.memory import item


class Deadlocked(Exception):
    """What psycopg raises when PostgreSQL picks a transaction as a deadlock's victim."""

    sqlstate = "40P01"


class RacingView:
    """A view whose first ``apply`` fails as a lost race would, then behaves."""

    def __init__(self, view: Any, error: Exception) -> None:
        self.view, self.error, self.failed = view, error, 0

    def apply(self, batch: Sequence[tuple[Any, Tracking]]) -> None:
        if not self.failed:
            self.failed += 1
            raise self.error
        self.view.apply(batch)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.view, name)


def lost_race(kind: type[Exception], cause: Exception | None = None) -> Exception:
    error = kind("lost a race")
    error.__cause__ = cause
    return error


@pytest.mark.parametrize(
    "error",
    [lost_race(IntegrityError), lost_race(OperationalError, Deadlocked())],
    ids=["tracking-conflict", "deadlock"],
)
def test_a_batch_that_lost_a_race_is_read_again(memory_store: Store, error: Exception) -> None:
    memory_store.app.save_all(*(item("global", f"fact {n}") for n in range(3)))
    view = RacingView(memory_store.view, error)
    assert catch_up(memory_store.app, view) == 3  # type: ignore[arg-type]
    assert view.failed == 1
    assert memory_store.view.position(memory_store.app.name) == memory_store.app.max_notification_id()


def test_any_other_operational_error_is_raised(memory_store: Store) -> None:
    memory_store.app.save_all(item("global", "a fact"))
    with pytest.raises(OperationalError):
        catch_up(memory_store.app, RacingView(memory_store.view, lost_race(OperationalError)))  # type: ignore[arg-type]
