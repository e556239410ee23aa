"""Real ``mnemolog run`` processes over a small session folder, killed and run again, and what to check after.

Used by the fault-injection and concurrency suites: ``Pipeline`` knows the
environment of one store (SQLite in a home folder, or a PostgreSQL URL), can
start ``run`` as a process, and reads back the log, the views and the
rendered folder in a form two runs can be compared by (item ids, which are
random, replaced by their order of appearance).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.session import Session
from mnemolog.projections.log_reader import log_events

from support.cli import MNEMOLOG
from support.sessions import thread_id, write_rollout

TEXTS = (
    "Always run make lint before pushing to main.",
    "Use pnpm, not npm, in this repository.",
    "The tests need PGHOST=localhost set.",
    "Never commit the .env file.",
)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def write_sessions(folder: Path, count: int = len(TEXTS)) -> list[Path]:
    """``count`` idle Codex rollouts, each with a failed and a passing command (the heuristic extractor keeps them)."""
    return [
        write_rollout(folder, thread_id(n + 1), TEXTS[n % len(TEXTS)], when=f"2026-11-0{n + 1}T10:00:00.000Z",
                      commands=(("make test", "error: 2 failed", 1), ("make test", "12 passed", 0)))
        for n in range(count)
    ]


@dataclass
class Pipeline:
    """One store and its memory folder, driven through real processes."""

    root: Path
    sessions: Path
    database_url: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def folder(self) -> Path:
        return self.root / "memories"

    def env(self, **extra: str) -> dict[str, str]:
        env = {**os.environ, "MNEMOLOG_HOME": str(self.home), "MNEMOLOG_MEMORY_DIR": str(self.folder),
               "MNEMOLOG_EXTRACT_MODEL": "heuristic", "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic",
               "NO_COLOR": "1", "COLUMNS": "200", **self.extra_env, **extra}
        env.pop("MNEMOLOG_FAULT_AT", None) if "MNEMOLOG_FAULT_AT" not in extra else None
        if self.database_url:
            env["MNEMOLOG_DATABASE_URL"] = self.database_url
        else:
            env.pop("MNEMOLOG_DATABASE_URL", None)
        return env

    def start(self, *args: str, **extra: str) -> subprocess.Popen[str]:
        """``mnemolog run SESSIONS --all`` (or ``args``) as a process."""
        command = [MNEMOLOG, *(args or ("run", str(self.sessions), "--all"))]
        return subprocess.Popen(command, env=self.env(**extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run(self, *args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run to the end; returns the finished process."""
        process = self.start(*args, **extra)
        out, err = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def kill_after(self, seconds: float) -> int:
        """Start a run, SIGKILL it after ``seconds`` (if still running); returns its exit code (-9 when killed)."""
        process = self.start()
        time.sleep(seconds)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=300)
        return process.returncode

    # ------------------------------------------------------------ what a recovery check reads

    def folder_snapshot(self) -> dict[str, str]:
        """Every file of the memory folder, item ids replaced by their order of first appearance."""
        files = {str(p.relative_to(self.folder)): p.read_text() for p in sorted(self.folder.rglob("*")) if p.is_file()}
        ids: dict[str, str] = {}

        def name(match: re.Match[str]) -> str:
            return ids.setdefault(match.group(0), f"<id{len(ids)}>")

        return {_UUID.sub(name, path): _UUID.sub(name, text) for path, text in files.items()}

    def leftovers(self) -> list[str]:
        """Staging or set-aside folders left beside the memory folder."""
        return sorted(p.name for p in self.folder.parent.iterdir() if p.name.startswith(f".{self.folder.name}."))

    def log_check(self) -> dict[str, object]:
        """Sessions recorded per id, those without an answer, whether views equal a rebuild, runs left started."""
        store = open_store(Settings(home=self.home, database_url=self.database_url))
        try:
            store.catch_up()
            recorded = Counter(e.originator_id for _, e in log_events(store.app) if isinstance(e, Session.Recorded))
            dump = store.reads().dump()
            sessions = dump.get("sessions", []) if isinstance(dump, dict) else []
            unanswered = [s["id"] for s in sessions if s.get("extraction_status") not in ("extracted", "nothing")]
            store.rebuild()
            rebuilt = store.reads().dump()
            return {"recorded": dict(recorded), "unanswered": unanswered, "views_equal_rebuild": dump == rebuilt}
        finally:
            store.close()
