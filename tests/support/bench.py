"""Helpers for tests/benchmarks: two scales, interleaved repetitions, ratio lines.

Each benchmark runs at the ``ci`` scale in the normal suite (small sizes, so it
keeps working; nothing is timed against a threshold) and at the ``full`` scale
under ``pytest -m benchmark -s tests/benchmarks``. Every figure is printed as
``median [min–max]`` of per-repetition ratios against a raw baseline measured
in the same repetition (interleaved, so a busy moment hits both alike).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

SCALES = [pytest.param("ci", id="ci"), pytest.param("full", id="full", marks=pytest.mark.benchmark)]


def timed(action: Callable[[], Any]) -> float:
    """Seconds ``action`` takes."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def interleaved(actions: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Seconds per round for each action, the actions taking turns within each round."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(rounds):
        for name, action in actions.items():
            times[name].append(timed(action))
    return times


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """``median [min–max]`` of ``values``."""
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}–{fmt.format(max(values))}]"


def ratios(ours: Sequence[float], base: Sequence[float]) -> list[float]:
    """Per-round ratios ours / base."""
    return [a / b for a, b in zip(ours, base, strict=True) if b > 0]


def ms(values: Sequence[float]) -> str:
    """Seconds as ``median [min–max]`` milliseconds."""
    return spread([v * 1000 for v in values], "{:.1f}") + " ms"


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0–100) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def report(title: str, lines: Sequence[str]) -> None:
    """Print one benchmark's block (visible with ``-s``)."""
    print("\n" + "\n".join([f"[bench] {title}", *(f"  {line}" for line in lines)]))


def fresh_database(request: pytest.FixtureRequest, name: str) -> str:
    """The URL of a new, empty PostgreSQL database ``name`` on the test cluster."""
    server = request.getfixturevalue("postgres_server")
    with server.connect(autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return str(server.dsn(name))


@contextlib.contextmanager
def keys_in_one_commit(store: Any) -> Iterator[None]:
    """The data keys a batch of new aggregates makes, committed once (the fill is set-up, not measured:
    a commit of the key file per aggregate made the 300k log take most of the benchmark's time)."""
    db = store.keys._db()  # type: ignore[attr-defined]
    if store.backend == "postgres":
        with db.transaction():
            yield
        return
    db.execute("BEGIN")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
