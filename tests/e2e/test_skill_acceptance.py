"""Issue 18's acceptance through the CLI, offline models, real session files (Codex and Claude Code).

1. Two sessions in one project run the same three-step procedure successfully: `run` learns one skill;
   its `skills/<name>/SKILL.md` lists the steps, and `explain` names the two sessions.
2. A later session fails at a step and a different command works: the skill is revised; `audit` of that
   run shows the steps before and after.
3. `forget` of a value inside a skill retires it, and the re-rendered folder has no `skills/<name>/`.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from mnemolog.adapters.tokens import count_tokens
from support.agent_sessions import ClaudeSession, CodexRollout
from support.cli import run_cli
from support.folder_validator import validate_folder

REMOTE = "git@github.com:acme/billing.git"
SCOPE = "git:github.com/acme/billing"
NAME = "sync-alembic-pytest"
SKILL = f"skills/{NAME}/SKILL.md"


def _project(tmp_path: Path, name: str = "billing", remote: str = REMOTE) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def _codex_session(project: Path, sessions: Path) -> Path:
    return (
        CodexRollout(1, datetime(2026, 11, 2, 9, tzinfo=UTC), str(project), REMOTE)
        .user("Add an invoice_due column to the invoices table.")
        .shell("ls", "Makefile\nalembic.ini\nbilling\ntests\n")
        .shell(f"cd {project} && uv sync", "Resolved 41 packages in 12ms\nAudited 41 packages in 0.4ms")
        .patch("billing/models.py", "total = Column(Numeric)", "total = Column(Numeric)\n    invoice_due = Column(Date)")
        .shell("uv run alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 3f2a -> 9c1d, invoice due")
        .shell(f"uv run pytest -q {project}/tests", "........................ [100%]\n24 passed in 2.31s")
        .shell("git status --short", " M billing/models.py")
        .say("Added the column with its migration; the tests pass.")
        .write(sessions)
    )


def _claude_session(project: Path, sessions: Path) -> Path:
    return (
        ClaudeSession(2, datetime(2026, 11, 4, 15, tzinfo=UTC), str(project))
        .user("Add a refunded_at timestamp to payments.")
        .bash("uv sync", "Resolved 41 packages in 10ms")
        .edit_file(f"{project}/billing/models.py", "status = Column(String)", "status = Column(String)\n    refunded_at = Column(DateTime)")
        .bash("uv run alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 9c1d -> 77ab, refunded at")
        .bash("uv run pytest -q tests", "......................... [100%]\n25 passed in 2.40s")
        .say("Done: column, migration, tests green.")
        .write(sessions)
    )


def _later_session(project: Path, sessions: Path) -> Path:
    return (
        ClaudeSession(3, datetime(2026, 11, 9, 10, tzinfo=UTC), str(project))
        .user("Add a currency column to invoices.")
        .bash("uv sync", "Resolved 41 packages in 9ms")
        .bash(
            "uv run alembic upgrade head",
            "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: 'alembic.ini'",
            1,
        )
        .bash("ls", "billing\nmigrations\ntests\n")
        .bash("uv run python -m billing.migrate", "applied 1 migration: 5e0f currency")
        .bash("uv run pytest -q tests", ".......................... [100%]\n26 passed in 2.52s")
        .say("alembic.ini is gone (migrations moved to billing.migrate); migrated with it, tests pass.")
        .write(sessions)
    )


def _run(sessions: Path, env: dict[str, str]) -> dict:  # type: ignore[type-arg]
    result = run_cli("run", "--all", "--json", str(sessions), env=env)
    assert result.code == 0, result.err + result.out
    return result.json()  # type: ignore[no-any-return]


def _skills(env: dict[str, str]) -> list[dict]:  # type: ignore[type-arg]
    result = run_cli("list", "items", "--kind", "skill", "--status", "active", "--project", SCOPE, "--json", env=env)
    assert result.code == 0, result.err
    return result.json()["items"]  # type: ignore[no-any-return]


def test_skill_learnt_revised_and_forgotten(tmp_path: Path) -> None:
    project, sessions = _project(tmp_path), tmp_path / "sessions"
    home = tmp_path / "home"
    env = {"MNEMOLOG_HOME": str(home)}
    folder = home / "memories"
    _codex_session(project, sessions)
    _claude_session(project, sessions)

    # 1. two sessions, the same three steps: one skill, its file lists them, explain names both sessions
    _run(sessions, env)
    [skill] = _skills(env)
    assert skill["skill"]["name"] == NAME
    text = (folder / SKILL).read_text(encoding="utf-8")
    assert text.startswith(f"---\nname: {NAME}\ndescription: ")
    assert "1. `uv sync`\n2. `uv run alembic upgrade head`\n3. `uv run pytest -q tests`\n" in text
    assert SKILL in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert SKILL in (folder / "memory_summary.md").read_text(encoding="utf-8")
    assert validate_folder(folder, count_tokens) == []
    story = run_cli("explain", skill["id"], "--project", SCOPE, "--json", env=env)
    assert story.code == 0, story.err
    agents = sorted(s["agent"] for s in story.json()["sessions"])
    assert agents == ["claude-code", "codex"]
    shown = run_cli("show", skill["id"], "--project", SCOPE, env=env)
    assert shown.code == 0, shown.err
    assert f"skill     {NAME}   ({SKILL})" in shown.out and "  2. `uv run alembic upgrade head`" in shown.out
    printed = run_cli("explain", skill["id"], "--project", SCOPE, env=env).out
    assert f"skill {NAME}: 1. `uv sync`; 2. `uv run alembic upgrade head`; 3. `uv run pytest -q tests`" in printed
    other = _project(tmp_path, "web", "git@github.com:acme/web.git")
    rendered = run_cli("render", "--project", "git:github.com/acme/web", "--out", str(tmp_path / "web-folder"), env=env)
    assert rendered.code == 0 and not (tmp_path / "web-folder" / "skills").exists()  # another project: no skill
    assert other.is_dir()

    # 2. a later session: the migrate step fails, another command works in its place -> revised
    _later_session(project, sessions)
    report = _run(sessions, env)
    assert report["consolidate"]["items"]["revised"] >= 1
    [skill] = _skills(env)
    assert [s["command"] for s in skill["skill"]["steps"]] == ["uv sync", "uv run python -m billing.migrate", "uv run pytest -q tests"]
    assert "2. `uv run python -m billing.migrate`" in (folder / SKILL).read_text(encoding="utf-8")
    audit = run_cli("audit", env=env)
    assert audit.code == 0, audit.err
    assert f"before: steps {NAME}: 1. `uv sync`; 2. `uv run alembic upgrade head`; 3. `uv run pytest -q tests`" in audit.out
    assert f"after:  steps {NAME}: 1. `uv sync`; 2. `uv run python -m billing.migrate`; 3. `uv run pytest -q tests`" in audit.out
    assert "`uv run alembic upgrade head` failed and `uv run python -m billing.migrate` worked in its place" in audit.out

    # 3. forget a value inside the skill: retired, the folder loses skills/<name>/
    forgot = run_cli("forget", "billing.migrate", "--yes", "--json", env=env)
    assert forgot.code == 0, forgot.err
    assert skill["id"] in forgot.json()["retired"]
    assert _skills(env) == []
    assert not (folder / "skills" / NAME).exists()
    assert SKILL not in (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert validate_folder(folder, count_tokens) == []


def test_a_note_asking_for_a_skill_makes_one_for_its_project_only(tmp_path: Path) -> None:
    project, sessions = _project(tmp_path), tmp_path / "sessions"
    other = _project(tmp_path, "web", "git@github.com:acme/web.git")
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    _codex_session(project, sessions)
    text = "Skill deploy-staging: run `make build`, then `make push ENV=staging`, then `make smoke`."
    assert run_cli("note", text, "--cwd", str(project), env=env).code == 0
    _run(sessions, env)
    [skill] = _skills(env)
    assert skill["skill"]["name"] == "deploy-staging"
    files = run_cli("render", "--project", SCOPE, "--out", str(tmp_path / "billing-folder"), env=env)
    assert files.code == 0
    skill_md = (tmp_path / "billing-folder" / "skills" / "deploy-staging" / "SKILL.md").read_text(encoding="utf-8")
    assert "1. `make build`\n2. `make push ENV=staging`\n3. `make smoke`\n" in skill_md
    served = run_cli("context", "--cwd", str(project), env=env).out
    assert "[skill] deploy-staging" in served and "`make push ENV=staging`" in served
    assert "deploy-staging" not in run_cli("context", "--cwd", str(other), env=env).out
