"""The memory folder `run --all` renders from real sessions holds none of the defects memory used to have.

The real session files of ../shared/fixtures (both agents) are placed where
the agents keep them, next to a few sessions of our own for what they do not
contain (a package-manager preference, a preference for all projects, a
`make: ***` error, a failure fixed by an install step, one command run by
both agents), and the README's first command's pipeline runs with the offline
models. Each test reads the rendered folder, as Codex would.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mnemolog.adapters.session_files import SessionFiles
from mnemolog.domain.transcript import ItemKind
from support.agent_sessions import ClaudeSession, CodexRollout
from support.cli import run_cli
from support.shared_fixtures import shared_fixture

SHOP_REMOTE = "git@github.com:acme/shop.git"
API_REMOTE = "git@github.com:acme/api.git"
TRIVIAL = re.compile(r"^(ls|cat|head|tail|pwd|cd|echo|grep|rg|find|wc|tree|which|sed|git (status|log|diff|show))\b")


def _repo(folder: Path, remote: str) -> Path:
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def _our_sessions(root: Path, shop: Path, api: Path) -> list[Path]:
    day = datetime(2026, 5, 4, 9, tzinfo=UTC)
    return [
        CodexRollout(101, day, str(shop), SHOP_REMOTE).user("Get the dev server running.")
        .shell("make serve", "make: *** No rule to make target 'serve'.  Stop.", 2)
        .shell("pnpm dev", "ready on http://localhost:3000").say("Use `pnpm dev`.").write(root),
        ClaudeSession(102, day.replace(hour=11), str(shop)).user("use pnpm in this repo, not npm. Lint it.")
        .bash("pnpm run lint", "✔ No problems found").say("Clean.").write(root),
        CodexRollout(103, day.replace(hour=13), str(shop), SHOP_REMOTE).user("Lint again after the merge.")
        .shell("pnpm run lint", "✔ No problems found").say("Clean.").write(root),
        CodexRollout(104, day.replace(day=5), str(api), API_REMOTE).user("for all my projects: write commit messages in the imperative mood. Run the tests.")
        .shell("pytest", "E   ModuleNotFoundError: No module named 'acme_api'", 2)
        .shell("pip install -e .", "Successfully installed acme-api-0.4.0")
        .shell("pytest", "142 passed in 8.31s").say("Installed the package; tests pass.").write(root),
    ]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real")
    codex_home, home = root / "codex", root / "home"
    day_folder = codex_home / "sessions" / "2026" / "05" / "11"
    day_folder.mkdir(parents=True)
    for path in sorted(shared_fixture("codex-rollouts").glob("*.jsonl")):
        shutil.copy(path, day_folder / path.name)
    claude = home / ".claude" / "projects" / "-tmp-sample"
    claude.mkdir(parents=True)
    for path in sorted(shared_fixture("claude-code").glob("*.jsonl")):
        shutil.copy(path, claude / path.name)
    ours = root / "ours"
    for path in _our_sessions(ours, _repo(root / "repos" / "shop", SHOP_REMOTE), _repo(root / "repos" / "api", API_REMOTE)):
        agent = path.relative_to(ours).parts[0]
        target = (codex_home / "sessions" / "2026" / "05" / "04" if agent == "codex" else home / ".claude" / "projects" / path.parent.name) / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, target)
    env = {"CODEX_HOME": str(codex_home), "HOME": str(home), "MNEMOLOG_HOME": str(root / "mnemolog")}
    result = run_cli("run", "--all", env=env)
    assert result.code == 0, result.out + result.err
    return root / "mnemolog" / "memories"


def _read(folder: Path, name: str) -> str:
    return (folder / name).read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    return text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]


def _bullets(folder: Path) -> list[str]:
    """Every item bullet of MEMORY.md and memory_summary.md."""
    text = _read(folder, "MEMORY.md") + "\n" + _read(folder, "memory_summary.md")
    return [line for line in text.splitlines() if line.startswith("- ") and "[item:" in line]


def _commands(bullet: str) -> list[str]:
    return re.findall(r"`([^`]+)`", bullet.split("(`", 1)[0])


def _typed(fixtures: list[Path]) -> str:
    """Everything a user typed in the sessions (as the readers see it)."""
    files = SessionFiles()
    return "\n".join(
        item.text for path in fixtures for item in files.read(path).items if item.kind is ItemKind.USER
    )


def test_preferences_come_only_from_what_the_user_typed(folder: Path) -> None:
    memory = _read(folder, "MEMORY.md")
    prefs = [line for block in memory.split("## User preferences\n")[1:] for line in block.split("\n## ", 1)[0].splitlines() if line.startswith("- ")]
    assert prefs, "the pnpm and commit-message preferences are kept"
    sessions = [*folder.parent.parent.rglob("*.jsonl")]
    typed = " ".join(_typed(sessions).split())
    for pref in prefs:
        text = re.sub(r"( \[Task \d+\])*( \[item:[^\]]+\])$", "", pref[2:])
        assert text in typed, pref
    everything = _read(folder, "memory_summary.md") + memory
    assert "MCP graph tools" not in everything  # the real Codex session's AGENTS.md
    assert "Don't stop until" not in everything  # a one-off task instruction, not a preference


def test_tool_arguments_are_never_listed_as_commands(folder: Path) -> None:
    bullets = _bullets(folder)
    assert any(_commands(bullet) for bullet in bullets), "the real sessions' commands are in memory: there is something to check"
    for bullet in bullets:
        assert '{"' not in bullet and "file_path" not in bullet and "subagent_type" not in bullet, bullet


def test_trivial_commands_are_never_knowledge(folder: Path) -> None:
    memory = _read(folder, "MEMORY.md")
    checked = 0
    for heading in ("Reusable knowledge", "Failures and how to do differently"):
        for block in memory.split(f"## {heading}\n")[1:]:
            for line in block.split("\n#", 1)[0].splitlines():
                for command in _commands(line):
                    checked += 1
                    assert not TRIVIAL.match(command), line
    assert checked, "no command in the knowledge sections: nothing was checked"


def test_a_fix_is_never_the_failing_command_run_again_and_the_real_fix_is_kept(folder: Path) -> None:
    fixes = [b for b in _bullets(folder) if " failed" in b and " -> " in b]
    assert fixes
    for bullet in fixes:
        failing = re.match(r"^- (?:tip: )?`([^`]+)` failed", bullet)
        fixed = re.search(r" -> `([^`]+)` worked", bullet)
        if failing and fixed:
            assert failing.group(1) != fixed.group(1), bullet
    assert any("ModuleNotFoundError" in b and "run `pip install -e .` first, then `pytest` works" in b for b in fixes)


def test_keywords_and_task_groups_come_from_content(folder: Path) -> None:
    memory = _read(folder, "MEMORY.md")
    keywords = [k.strip() for block in memory.split("### keywords\n")[1:] for k in block.splitlines()[0].lstrip("- ").split(",")]
    assert keywords
    for bad in ("cd", "general", '{"file_path":'):
        assert bad not in keywords
    groups = re.findall(r"^# Task Group: (.*)$", memory, re.MULTILINE)
    assert groups and not any(g.strip().lower() == "general" for g in groups)


def test_rollout_summaries_say_what_was_done(folder: Path) -> None:
    summaries = sorted((folder / "rollout_summaries").glob("*.md"))
    assert len(summaries) >= 4
    for path in summaries:
        body = path.read_text().split("\n\n", 1)[1]
        assert body.startswith("The user asked: ")
        assert re.search(r"^(Commands that passed|Files changed|Fixed|Still failing): ", body, re.MULTILINE), path.name
        assert re.search(r"^Outcome: (success|partial|fail|uncertain)\.$", body, re.MULTILINE)


def test_whats_in_memory_is_dated_by_the_sessions(folder: Path) -> None:
    days = set(re.findall(r"^#### (\d{4}-\d{2}-\d{2})$", _read(folder, "memory_summary.md"), re.MULTILINE))
    assert days
    session_days = {m[:10] for m in re.findall(r"updated_at=(\S+?)[,)]", _read(folder, "MEMORY.md"))}
    assert days <= session_days
    assert datetime.now(UTC).date().isoformat() not in days


def test_make_error_stars_are_kept_verbatim(folder: Path) -> None:
    memory = _read(folder, "MEMORY.md")
    assert "make: *** No rule to make target 'serve'." in memory
    assert "make: * No rule" not in memory


def test_use_x_not_y_is_a_preference_of_its_project(folder: Path) -> None:
    summary = _read(folder, "memory_summary.md")
    shop = summary.split("### shop\n", 1)[1].split("\n### ", 1)[0]
    assert "- preference: use pnpm in this repo, not npm." in shop
    assert "pnpm" not in _section(summary, "User preferences")


def test_for_all_my_projects_is_user_wide(folder: Path) -> None:
    prefs = _section(_read(folder, "memory_summary.md"), "User preferences")
    assert "write commit messages in the imperative mood" in prefs
    assert "(project:" not in prefs


def test_the_same_command_from_both_agents_is_one_bullet(folder: Path) -> None:
    lint = [b for b in _read(folder, "MEMORY.md").splitlines() if b.startswith("- `pnpm run lint` passed")]
    assert len(lint) == 1
    assert "exec_command" not in _read(folder, "MEMORY.md") and "(Bash)" not in _read(folder, "MEMORY.md")


def test_general_tips_hold_no_project_tips(folder: Path) -> None:
    summary, memory = _read(folder, "memory_summary.md"), _read(folder, "MEMORY.md")
    project_items = set()
    for block in memory.split("# Task Group: ")[1:]:
        if "\nscope: project " in block:
            project_items.update(re.findall(r"\[item:([^\]]+)\]", block))
    assert project_items
    general = _section(summary, "General Tips") + _section(summary, "User preferences")
    assert not project_items & set(re.findall(r"\[item:([^\]]+)\]", general))
    for block in summary.split("\n### ")[1:]:
        if re.search(r"^- (preference|tip): ", block, re.MULTILINE):
            assert "\napplies_to: cwd=" in block  # a project's memory comes with Codex's applies_to line


def test_the_folder_keeps_codex_layout(folder: Path) -> None:
    from mnemolog.adapters.tokens import count_tokens
    from support.folder_validator import validate_folder

    assert validate_folder(folder, count_tokens) == []
