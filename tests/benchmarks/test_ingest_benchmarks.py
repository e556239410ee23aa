"""Benchmarks of ingest and phase-1 input against raw baselines in the same run.

Ingest (goal ≥ 0.25× ``json.loads`` of every line of the same files): copies of
the real session files in ``../shared/fixtures`` (each copy under a new session
id, in a temporary folder; never in the repository), 500 sessions at full size.
Phase-1 input (goal ≤ 0.6 of Codex's serialisation on every rollout over 2,000
tokens, with every user message and error line kept): ``mnemolog tokens``'s
report on each real session file.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.eligibility import EligibilityPolicy
from mnemolog.domain.services.ingest import ingest
from support.bench import SCALES, ratios, report, spread, timed
from support.shared_fixtures import SHARED, shared_fixture

SESSIONS = {"ci": 12, "full": 500}
ROUNDS = {"ci": 1, "full": 2}
_ID_KEYS = ("id", "sessionId", "session_id")


def _fixture_files() -> list[Path]:
    shared_fixture("codex-rollouts")
    return sorted(p for p in SHARED.rglob("*.jsonl") if p.is_file())


def _copies(target: Path, count: int) -> list[Path]:
    """``count`` session files: the fixtures in turn, each copy's session id replaced by a new one."""
    sources = _fixture_files()
    made = []
    for n in range(count):
        source = sources[n % len(sources)]
        text = source.read_text()
        first = json.loads(text.splitlines()[0])
        old = next(
            (str(v) for part in (first, first.get("payload") or {}) for k, v in part.items() if k in _ID_KEYS and isinstance(v, str)),
            None,
        )
        new = str(uuid.UUID(int=n + 1))
        if old:
            text = text.replace(old, new)
        folder = target / source.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / source.name.replace(old or "\0", new)
        if path.exists():
            path = folder / f"{n}-{path.name}"
        path.write_text(text)
        made.append(path)
    return made


def _json_lines(paths: list[Path]) -> None:
    for path in paths:
        with path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    json.loads(line)


@pytest.mark.parametrize("scale", SCALES)
def test_ingest_against_json_loads(scale: str, tmp_path: Path) -> None:
    paths = _copies(tmp_path / "sessions", SESSIONS[scale])
    size = sum(p.stat().st_size for p in paths) / 1e6
    ours, base, ours_cpu, base_cpu = [], [], [], []
    for n in range(ROUNDS[scale]):
        store = open_store(Settings(home=tmp_path / f"home-{n}"))

        def run(s=store) -> None:  # type: ignore[no-untyped-def]
            got = ingest(s, s.ports.session_source, [tmp_path / "sessions"], EligibilityPolicy(), redactor=s.ports.redactor, scopes=s.ports.scopes)
            assert got.files_read == len(paths) and not got.errors, got.as_dict()

        cpu = time.process_time()
        ours.append(timed(run))
        ours_cpu.append(time.process_time() - cpu)
        cpu = time.process_time()
        base.append(timed(lambda: _json_lines(paths)))
        base_cpu.append(time.process_time() - cpu)
        store.close()
    report(
        f"ingest, {len(paths)} sessions, {size:.1f} MB (goal ≥ 0.25× json.loads)",
        [
            f"mnemolog {spread([size / t for t in ours], '{:.1f}')} MB/s; json.loads of every line {spread([size / t for t in base], '{:.1f}')} MB/s",
            f"speed ratio {spread(ratios(base, ours), '{:.3f}')}",
            # On a loaded machine the wall times are mostly waiting for a core: the CPU time of this
            # process (SQLite runs in it) tells the cost.
            f"CPU time: mnemolog {spread(ours_cpu, '{:.2f}')} s, json.loads {spread(base_cpu, '{:.2f}')} s; "
            f"ratio {spread(ratios(base_cpu, ours_cpu), '{:.3f}')}",
        ],
    )


@pytest.mark.parametrize("scale", SCALES)
def test_phase_one_input_against_codex_serialisation(scale: str) -> None:
    """The same real files at both scales (so ``-m benchmark`` prints this row too)."""
    from mnemolog.adapters.token_report import token_report

    lines = []
    worst = 0.0
    for path in _fixture_files():
        got = token_report(path, Settings().extract_input_tokens)
        over = got.plain_tokens > 2000
        if over:
            worst = max(worst, got.ratio)
        lines.append(
            f"{path.name[:60]:<60} plain {got.plain_tokens:>7,}  ours {got.rendered_tokens:>7,}  ratio {got.ratio:.2f}"
            f"  users {got.user_messages_kept}/{got.user_messages}  errors {got.error_lines_kept}/{got.error_lines}"
            + ("" if over else "  (under 2,000 tokens)")
        )
        assert got.lossless or not over, lines[-1]
    lines.append(f"worst ratio over 2,000 tokens: {worst:.2f}")
    report("phase-1 input tokens vs Codex's serialisation (goal ≤ 0.6, 100% of user messages and error lines)", lines)
