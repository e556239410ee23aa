"""Benchmarks of the read path against raw baselines in the same run: context, search, render.

``pytest -m benchmark -s tests/benchmarks`` runs them at 10k and 100k items;
the normal suite runs them at a few hundred items (no timing assertions).
Goals (issue 15): context ≤ 200 ms in process at 10k items, growing ≤ 2× to
100k; search p50 ≤ 5 ms, p95 ≤ 20 ms, ≥ 100× faster than ``grep -ri`` over
the same items; render at 100k items linear and ≤ 200 MiB.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_store
from support.bench import (
    SCALES,
    fresh_database,
    interleaved,
    ms,
    percentile,
    ratios,
    report,
    spread,
    timed,
)
from support.bench_items import (
    COMMON,
    MEDIUM,
    PROJECT,
    RARE,
    VOCABULARY,
    fill,
    write_grep_file,
    write_grep_folder,
)
from support.reading import context_for, search

SIZES = {"ci": (300, 1_500), "full": (10_000, 100_000)}
ROUNDS = {"ci": 3, "full": 7}
BARE = [sys.executable, "-c", "pass"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _bare() -> None:
    subprocess.run(BARE, check=True)


@pytest.fixture(scope="module", params=SCALES)
def scale(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Stores:
    """One store per (backend, size), built once per module and scale."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.opened: dict[tuple[str, int], tuple[Store, list[tuple[str, str, str]]]] = {}

    def get(self, backend: str, size: int, request: pytest.FixtureRequest) -> tuple[Store, list[tuple[str, str, str]]]:
        key = (backend, size)
        if key not in self.opened:
            url = fresh_database(request, f"bench_read_{size}") if backend == "postgres" else None
            store = open_store(Settings(home=self.root / f"{backend}-{size}", database_url=url))
            self.opened[key] = (store, fill(store, size))
        return self.opened[key]

    def close(self) -> None:
        for store, _ in self.opened.values():
            store.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, scale: str) -> Iterator[Stores]:
    built = Stores(tmp_path_factory.mktemp(f"bench-read-{scale}"))
    yield built
    built.close()


def test_context_against_bare_python(stores: Stores, scale: str, request: pytest.FixtureRequest) -> None:
    lines, medians = [], []
    for size in SIZES[scale]:
        store, _ = stores.get("sqlite", size, request)
        context_for(store, PROJECT)  # warm: the page cache, the prompt, the matcher
        times = interleaved({"context": lambda s=store: context_for(s, PROJECT), "bare": _bare}, ROUNDS[scale])
        medians.append(statistics.median(times["context"]))
        lines.append(
            f"context at {size:,} items (in process): {ms(times['context'])}; "
            f"python -c pass {ms(times['bare'])}; ratio {spread(ratios(times['context'], times['bare']))}"
        )
    lines.append(f"growth {SIZES[scale][0]:,} → {SIZES[scale][1]:,} items: {medians[1] / medians[0]:.2f}× (goal ≤ 2×)")
    report("context (goal ≤ 200 ms at 10k items in process)", lines)
    assert context_for(store, PROJECT).item_ids  # it shows memory


QUERIES = [COMMON, MEDIUM, RARE, f"{MEDIUM} {VOCABULARY[90]}", f"{COMMON} {MEDIUM}", "nosuchword"]


def _grep(target: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``grep -ri MEDIUM target``."""
    before = _children_cpu()
    took = timed(lambda: subprocess.run(["grep", "-ri", MEDIUM, str(target)], stdout=subprocess.DEVNULL, check=False))
    return took, _children_cpu() - before


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_search_against_grep(stores: Stores, scale: str, backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Search at two sizes: p50/p95 over every query, the median of each query, and grep over the same items.

    grep is measured in two layouts of the same items' text: one file of one
    line per item, and a folder of one Markdown file per item (how a notes
    folder stores memory). Our CPU time is this process's (SQLite does the
    work in it); on PostgreSQL the server's work is in the wall time only.
    """
    lines, p50s = [], []
    for size in SIZES[scale]:
        store, texts = stores.get(backend, size, request)
        grep_file = write_grep_file(texts, tmp_path / f"items-{size}.txt")
        grep_folder = write_grep_folder(texts, tmp_path / f"items-{size}")
        for query in QUERIES:
            search(store, query, PROJECT)  # warm
        _grep(grep_file), _grep(grep_folder)  # warm the page cache
        samples: list[float] = []
        cpu: list[float] = []  # CPU seconds: on a shared machine wall time is mostly waiting for a core
        per_query: dict[str, list[float]] = {}
        per_query_cpu: dict[str, list[float]] = {}
        greps: dict[str, list[tuple[float, float]]] = {"one file": [], "a file per item": []}
        for _ in range(ROUNDS[scale]):
            for query in QUERIES:
                started = time.process_time()
                took = timed(lambda q=query, s=store: search(s, q, PROJECT))
                cpu.append(time.process_time() - started)
                samples.append(took)
                per_query.setdefault(query, []).append(took)
                per_query_cpu.setdefault(query, []).append(cpu[-1])
            greps["one file"].append(_grep(grep_file))
            greps["a file per item"].append(_grep(grep_folder))
        p50, p95 = percentile(samples, 50), percentile(samples, 95)
        cpu50 = percentile(cpu, 50)
        p50s.append(p50)
        worst = max(QUERIES, key=lambda q: statistics.median(per_query[q]))
        lines.append(
            f"{backend} search at {size:,} items: p50 {p50 * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms (wall); "
            f"CPU p50 {cpu50 * 1000:.2f} ms, p95 {percentile(cpu, 95) * 1000:.2f} ms"
        )
        lines.append(
            "  median per query (wall / CPU ms): "
            + ", ".join(f"{q!r} {statistics.median(per_query[q]) * 1000:.2f} / {statistics.median(per_query_cpu[q]) * 1000:.2f}" for q in QUERIES)
            + f"; slowest {worst!r}"
        )
        for layout, runs in greps.items():
            wall, gcpu = [w for w, _ in runs], [c for _, c in runs]
            lines.append(
                f"  grep -ri over {layout}: {statistics.median(wall) * 1000:.1f} ms wall, {statistics.median(gcpu) * 1000:.1f} ms CPU; "
                f"grep / search (p50): wall {spread([w / p50 for w in wall], '{:.1f}')}×, CPU {statistics.median(gcpu) / max(cpu50, 1e-6):.1f}×"
            )
    lines.append(f"growth of p50 {SIZES[scale][0]:,} → {SIZES[scale][1]:,} items: {p50s[1] / p50s[0]:.2f}×")
    report(f"search, {backend} (goal p50 ≤ 5 ms, p95 ≤ 20 ms for any word, ≥ 100× grep)", lines)
    assert search(store, RARE, PROJECT) or search(store, COMMON, PROJECT)


_RENDER = """
import resource, sys, time
from pathlib import Path
from mnemolog.adapters.store import open_store
from mnemolog.adapters.settings import Settings
from mnemolog.cli.memory_folder import write_memory_folder
store = open_store(Settings(home=Path(sys.argv[1])))
start = time.perf_counter()
files = write_memory_folder(store, Path(sys.argv[2]))
took = time.perf_counter() - start
# This process's own peak: ru_maxrss survives exec, so after a fork it counts the parent's pages.
status = Path("/proc/self/status")
peak = [int(l.split()[1]) for l in status.read_text().splitlines() if l.startswith("VmHWM:")] if status.exists() else []
print(took, (peak[0] if peak else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024, len(files))
"""


def test_render_time_and_memory(stores: Stores, scale: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    lines, took = [], []
    for size in SIZES[scale]:
        store, _ = stores.get("sqlite", size, request)
        home = Path(store.settings.home)
        runs = []
        for n in range(ROUNDS[scale] if scale == "ci" else 3):
            out = subprocess.run(
                [sys.executable, "-c", _RENDER, str(home), str(tmp_path / f"folder-{size}-{n}")],
                capture_output=True, text=True, check=True, env={**os.environ, "MNEMOLOG_DATABASE_URL": ""},
            ).stdout.split()
            runs.append((float(out[0]), float(out[1]), int(out[2])))
        took.append(statistics.median(r[0] for r in runs))
        lines.append(
            f"render at {size:,} items: {spread([r[0] for r in runs], '{:.2f}')} s, "
            f"peak RSS {spread([r[1] for r in runs], '{:.0f}')} MiB, {runs[0][2]} files"
        )
    lines.append(f"growth {SIZES[scale][0]:,} → {SIZES[scale][1]:,} items: {took[1] / took[0]:.2f}× for {SIZES[scale][1] / SIZES[scale][0]:.0f}× the items (linear: ≈ that)")
    report("render (goal linear, ≤ 200 MiB at 100k items)", lines)
