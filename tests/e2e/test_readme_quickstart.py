"""The README's two commands: the first runs the whole pipeline offline from a fresh clone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from mnemolog.adapters.tokens import count_tokens
from support.folder_validator import validate_folder
from support.shared_fixtures import shared_fixture

ROOT = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S)]


def fresh_clone(target: Path) -> Path:
    """The files a clone of the current tree would have (tracked and new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_the_quick_start_has_two_commands_and_ci_runs_the_second() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert commands[1] in (ROOT / ".ci" / "run").read_text()


def test_the_first_command_runs_the_pipeline_offline_on_real_rollouts(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    sessions = codex_home / "sessions" / "2026" / "05" / "11"
    sessions.mkdir(parents=True)
    for source in shared_fixture("codex-rollouts").glob("*.jsonl"):
        shutil.copyfile(source, sessions / source.name)
    clone = fresh_clone(tmp_path / "clone")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENAI_", "MNEMOLOG_", "VIRTUAL_ENV"))
    }
    env.update(HOME=str(tmp_path / "home"), CODEX_HOME=str(codex_home), MNEMOLOG_HOME=str(tmp_path / "data"), NO_COLOR="1")

    done = subprocess.run(["bash", "-c", quick_start_commands()[0]], cwd=clone, env=env, capture_output=True, text=True, timeout=600)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "offline heuristic models" in done.stdout
    assert "ingest: 4 files read" in done.stdout
    folder = tmp_path / "data" / "memories"
    assert (folder / "memory_summary.md").read_text().startswith("v1\n")
    assert list((folder / "rollout_summaries").glob("*.md"))
    assert validate_folder(folder, count_tokens) == []
