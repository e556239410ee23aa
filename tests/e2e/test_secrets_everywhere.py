"""Planted secrets in every place a session holds text never reach the store, the folder or any read.

The corpus (``support.secrets_corpus``): 220 made-up values of 44 kinds,
each in its own session, spread over user and assistant messages, tool calls
and outputs, the working folder, the session file's path, the git branch and
remote, and tool names, in Codex and Claude Code files. After the whole
pipeline, no value may be in any file of the store or the folder, nor in
what ``run``, ``context``, ``search``, ``show`` and ``explain`` print. CI runs
every fifth value; ``-m slow`` runs them all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from support.cli import run_cli
from support.secrets_corpus import LOCATIONS, corpus_values, placements, write_planted_sessions


def _needles(value: str) -> list[bytes]:
    return [value.encode(), json.dumps(value)[1:-1].encode()]


def _leaks(placed: list[tuple[str, str, str, str]], blobs: dict[str, bytes]) -> list[str]:
    found = []
    for kind, value, agent, location in placed:
        for where, blob in blobs.items():
            if any(needle in blob for needle in _needles(value)):
                found.append(f"{kind} ({agent}, {location}) leaked into {where}")
    return found


def _stored_files(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()}


def _read_everything(home: Path) -> dict[str, bytes]:
    """What every read command prints, for every project and item in the store."""
    env = {"MNEMOLOG_HOME": str(home)}
    store = open_store(Settings(home=home))
    try:
        store.catch_up()
        reads = store.reads()
        items = reads.active_items()
        scopes = sorted({s.scope for s in reads.session_texts()})
    finally:
        store.close()
    printed: dict[str, bytes] = {}
    for scope in scopes[:12]:
        if scope.startswith(("git:", "path:")):
            printed[f"context {scope}"] = run_cli("context", "--project", scope, env=env).out.encode()
            printed[f"search {scope}"] = run_cli("search", "nothing secret", "--project", scope, "--json", env=env).out.encode()
    for item in items[:40]:
        scope = item.scope if item.scope.startswith(("git:", "path:")) else scopes[0]
        for command in ("show", "explain"):
            result = run_cli(command, str(item.item_id), "--project", scope, "--json", env=env)
            printed[f"{command} {item.item_id}"] = (result.out + result.err).encode()
    return printed


def _run_corpus(tmp_path: Path, every: int) -> None:
    folder, home = tmp_path / "sessions", tmp_path / "home"
    placed = write_planted_sessions(folder, every)
    env = {"MNEMOLOG_HOME": str(home), "MNEMOLOG_EXTRACT_MODEL": "heuristic", "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic"}
    result = run_cli("run", str(folder), "--all", "--json", env=env)
    assert result.code == 0, result.err[-2000:]
    report = result.json()
    assert report["ingest"]["new"] == len(placed) and report["ingest"]["redactions"] >= len(placed)
    blobs = {"run output": (result.out + result.err).encode(), **_stored_files(home), **_read_everything(home)}
    leaks = _leaks(placed, blobs)
    assert not leaks, "\n".join(leaks[:40])


def test_the_corpus_is_large_and_covers_every_location() -> None:
    values = corpus_values()
    assert len(values) >= 200 and len({kind for kind, _ in values}) >= 20
    assert len({value for _, value in values}) == len(values)
    assert {location for *_, location in placements()} == set(LOCATIONS)


def test_a_sample_of_planted_secrets_leaks_nowhere(tmp_path: Path) -> None:
    _run_corpus(tmp_path, every=5)


@pytest.mark.slow
def test_every_planted_secret_leaks_nowhere(tmp_path: Path) -> None:
    _run_corpus(tmp_path, every=1)
