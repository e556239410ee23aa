"""An eval corpus on disk, made ready to run: expectations read, projects made, sessions placed, a fresh store.

A corpus is a folder with ``expectations.toml`` and session files
(``*.jsonl``, Codex and Claude Code, as the agents write them) anywhere
below it (``docs/eval.md``). Each project of the expectations becomes a
folder with a git repository whose ``origin`` is the project's remote,
inside a temporary workspace; the session files are copied there with the
project's recorded working folder (``cwd``) rewritten to that folder, so
both agents' sessions land in the project's scope exactly as they would on
the user's machine (Claude Code records no remote: ingest asks the folder's
repository). Notes files the corpus holds where Codex keeps them in a memory
folder (``extensions/ad_hoc/notes/*.md``) are placed in the eval's memory
folder, where the user's pipeline records them, as it does a user's. The
store is a new SQLite store in the workspace.
"""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mnemolog.adapters.note_files import NOTES_DIR
from mnemolog.adapters.scope import folder_scope
from mnemolog.adapters.settings import Settings, load_settings
from mnemolog.adapters.store import Store, open_store
from mnemolog.domain.evaluation import Expectations
from mnemolog.domain.services.evaluate import EvalCorpus
from pydantic import ValidationError

EXPECTATIONS_FILE = "expectations.toml"
MEMORY_FOLDER = "memories"  # the eval's memory folder, in the workspace


class CorpusError(Exception):
    """The corpus cannot be used (no expectations file, a broken one, a project git cannot make)."""


def load_expectations(corpus: Path) -> Expectations:
    """The corpus's ``expectations.toml``, validated; CorpusError with one line saying what is wrong."""
    path = corpus / EXPECTATIONS_FILE
    if not path.is_file():
        raise CorpusError(f"{corpus} is not an eval corpus: it has no {EXPECTATIONS_FILE}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return Expectations.model_validate(data)
    except tomllib.TOMLDecodeError as error:
        raise CorpusError(f"{path}: not valid TOML: {error}") from error
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise CorpusError(f"{path}: {where}: {first['msg']}") from error


@dataclass
class SteppedClock:
    """The eval's clock: it stands where the replay put it."""

    now: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __call__(self) -> datetime:
        """The replay's current moment."""
        return self.now

    def set(self, moment: datetime) -> None:
        """Move the clock to ``moment``."""
        self.now = moment


def _git(folder: Path, *args: str) -> None:
    try:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        raise CorpusError(f"cannot make the project folder {folder} with git: {error}") from error


def _rewriter(paths: dict[str, str]) -> Any:
    """A function that rewrites every recorded project folder in a JSON value to the eval's folder."""
    if not paths:
        return lambda value: value
    pattern = re.compile("|".join(re.escape(old) for old in sorted(paths, key=len, reverse=True)) + r"(?![\w.-])")

    def rewrite(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda m: paths[m.group(0)], value)
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: rewrite(v) for k, v in value.items()}
        return value

    return rewrite


def _place(source: Path, target: Path, rewrite: Any) -> None:
    lines = []
    for line in source.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.dumps(rewrite(json.loads(line)), ensure_ascii=False))
        except json.JSONDecodeError:
            lines.append(line)  # a broken line stays broken: the readers' business
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def prepare(corpus: Path, workspace: Path) -> EvalCorpus:
    """Read the expectations, make each project's folder and place the session files in ``workspace``."""
    expectations = load_expectations(corpus)
    files = sorted(p for p in corpus.rglob("*.jsonl") if p.is_file())
    if not files:
        raise CorpusError(f"{corpus} holds no session files (*.jsonl)")
    for source in expectations.sources():
        if source.endswith(".jsonl") and not (corpus / source).is_file():
            raise CorpusError(f"{corpus / EXPECTATIONS_FILE}: 'from' names {source}, which is not a session file of the corpus")
    scopes: dict[str, str] = {}
    moved: dict[str, str] = {}
    for project in expectations.projects:
        folder = workspace / "projects" / re.sub(r"[^\w.-]", "_", project.name)
        folder.mkdir(parents=True, exist_ok=True)
        _git(folder, "init", "-q")
        _git(folder, "remote", "add", "origin", project.remote)
        moved[project.cwd.rstrip("/")] = str(folder)
        scopes[project.name] = folder_scope(folder)
    rewrite = _rewriter(moved)
    placed = []
    for path in files:
        target = workspace / "sessions" / path.relative_to(corpus)
        _place(path, target, rewrite)
        placed.append(target)
    notes = workspace / MEMORY_FOLDER / NOTES_DIR
    for note in sorted(p for p in (corpus / NOTES_DIR).glob("*.md") if p.is_file() and not p.is_symlink()):
        notes.mkdir(parents=True, exist_ok=True)
        (notes / note.name).write_bytes(note.read_bytes())
    return EvalCorpus(expectations=expectations, files=tuple(placed), scopes=scopes)


def open_eval_store(workspace: Path, clock: SteppedClock, settings: Settings | None = None) -> Store:
    """A new SQLite store in ``workspace`` (the models' settings stay the user's)."""
    base = settings or load_settings()
    fresh = base.model_copy(update={"home": workspace / "store", "database_url": None, "memory_dir": workspace / MEMORY_FOLDER})
    return open_store(fresh, clock)
