"""``mnemolog install`` on config files as users have them (no agent binary needed; Codex trust off)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from support.cli import run_cli

CLAUDE_SETTINGS = '{\n    "model": "opus",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}\n'
CODEX_CONFIG = '# mine\nmodel = "o4"  # keep this comment\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "home" / ".codex" / "memories").mkdir(parents=True)
    return {"HOME": str(tmp_path / "home"), "MNEMOLOG_HOME": str(tmp_path / "data"), "CODEX_HOME": "", "CLAUDE_CONFIG_DIR": ""}


def files(env: dict[str, str]) -> dict[str, bytes]:
    root = Path(env["HOME"])
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_claude_code_install_is_idempotent_keeps_the_users_hooks_and_uninstalls_byte_for_byte(home: dict[str, str]) -> None:
    settings = Path(home["HOME"]) / ".claude" / "settings.json"
    settings.write_text(CLAUDE_SETTINGS)
    before = files(home)

    dry = run_cli("install", "claude-code", "--dry-run", env=home)
    assert dry.code == 0 and "+++ " in dry.out and "would change" in dry.out
    assert files(home) == before and not (Path(home["MNEMOLOG_HOME"]) / "installs").exists()

    done = run_cli("install", "claude-code", env=home)
    assert done.code == 0, done.err
    config = json.loads(settings.read_text())
    assert config["model"] == "opus" and config["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"
    start = config["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    end = config["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert " context --hook --json --agent claude-code" in start and " capture --hook --agent claude-code" in end
    assert config["hooks"]["UserPromptSubmit"] == [{"hooks": [{"type": "command", "command": start, "timeout": 10}]}]  # recall per prompt
    assert all(part.startswith("/") for part in (start.split()[1], end.split()[1]))  # after MNEMOLOG_HOME=...
    server = json.loads((Path(home["HOME"]) / ".claude.json").read_text())["mcpServers"]["mnemolog"]
    assert Path(server["command"]).is_absolute() and server["args"] == ["mcp"]
    assert server["env"] == {"MNEMOLOG_HOME": home["MNEMOLOG_HOME"]}

    installed = files(home)
    again = run_cli("install", "claude-code", env=home)
    assert again.code == 0 and "already installed" in again.out and files(home) == installed

    removed = run_cli("install", "claude-code", "--uninstall", env=home)
    assert removed.code == 0, removed.err
    assert removed.out.count("restored byte for byte") == 2
    assert files(home) == before  # ~/.claude.json did not exist: it is gone again


def test_uninstall_keeps_changes_made_after_install(home: dict[str, str]) -> None:
    settings = Path(home["HOME"]) / ".claude" / "settings.json"
    settings.write_text(CLAUDE_SETTINGS)
    assert run_cli("install", "claude-code", env=home).code == 0
    changed = json.loads(settings.read_text()) | {"theme": "dark"}
    settings.write_text(json.dumps(changed))

    removed = run_cli("install", "claude-code", "--uninstall", env=home)
    assert removed.code == 0
    assert "later changes kept" in removed.out
    left = json.loads(settings.read_text())
    assert left == json.loads(CLAUDE_SETTINGS) | {"theme": "dark"}


def test_codex_install_edits_the_toml_in_place_and_never_touches_codex_memories(home: dict[str, str]) -> None:
    codex = Path(home["HOME"]) / ".codex"
    (codex / "config.toml").write_text(CODEX_CONFIG)
    (codex / "memories" / "raw_memories.md").write_text("Codex's own\n")
    before = files(home)

    done = run_cli("install", "codex", "--no-trust", env=home)
    assert done.code == 0, done.err
    assert "trust them with /hooks" in done.out or "/hooks" in done.out
    text = (codex / "config.toml").read_text()
    assert text.startswith(CODEX_CONFIG.split("\n\n")[0])  # comments and the user's keys stay as written
    config = tomllib.loads(text)
    assert config["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert config["mcp_servers"]["mnemolog"]["args"] == ["mcp"] and config["mcp_servers"]["mnemolog"]["required"] is True
    assert "features" not in config  # Codex's own memory pipeline stays as the user set it
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert " context --hook --json --agent codex" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert (codex / "memories" / "raw_memories.md").read_text() == "Codex's own\n"

    assert run_cli("install", "codex", "--uninstall", env=home).code == 0
    assert files(home) == before


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_prompt_recall_can_be_left_out_and_put_back_and_uninstall_takes_it_out(home: dict[str, str], agent: str) -> None:
    hooks_file = Path(home["HOME"]) / (".claude/settings.json" if agent == "claude-code" else ".codex/hooks.json")
    before = files(home)

    assert run_cli("install", agent, "--no-prompt-recall", "--no-trust", env=home).code == 0
    events = json.loads(hooks_file.read_text())["hooks"]
    assert "UserPromptSubmit" not in events and "SessionStart" in events
    without = files(home)
    again = run_cli("install", agent, "--no-prompt-recall", "--no-trust", env=home)
    assert again.code == 0 and files(home) == without, "idempotent without it too"

    assert run_cli("install", agent, "--no-trust", env=home).code == 0
    events = json.loads(hooks_file.read_text())["hooks"]
    assert len(events["UserPromptSubmit"]) == 1 and len(events["SessionStart"]) == 1

    assert run_cli("install", agent, "--uninstall", env=home).code == 0
    assert files(home) == before


def test_install_refuses_what_it_cannot_do_with_one_line(home: dict[str, str]) -> None:
    assert run_cli("install", "gemini", env=home).code == 2
    missing = run_cli("install", "codex", "--uninstall", env=home)
    assert missing.code == 5 and "not installed" in missing.err
    settings = Path(home["HOME"]) / ".claude" / "settings.json"
    settings.write_text("{not json")
    broken = run_cli("install", "claude-code", env=home)
    assert broken.code == 1 and "cannot read claude-code's config" in broken.err and "Traceback" not in broken.err
    assert settings.read_text() == "{not json"


def test_install_codex_warns_when_memory_dir_is_codexs_own_folder(home: dict[str, str]) -> None:
    memories = Path(home["HOME"]) / ".codex" / "memories"
    done = run_cli("install", "codex", "--no-trust", "--dry-run", env={**home, "MNEMOLOG_MEMORY_DIR": str(memories)})
    assert done.code == 0 and "memory_dir is Codex's own memory folder" in done.err


def _git_project(path: Path) -> Path:
    import subprocess

    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "."], cwd=path, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://example.com/acme/alpha.git"], cwd=path, check=True)
    return path


def _hook(env: dict[str, str], cwd: Path) -> dict[str, object] | None:
    done = run_cli("context", "--hook", "--json", "--agent", "claude-code", env=env, cwd=cwd, stdin=json.dumps({"cwd": str(cwd)}))
    assert done.code == 0, done.err
    return json.loads(done.out) if done.out.strip() else None


def _project_with_two_skills(home: dict[str, str], tmp_path: Path) -> Path:
    """A git project with its own skill, ship-alpha, and a user-wide one, tidy-user, made from notes."""
    project = _git_project(tmp_path / "work" / "alpha")
    assert run_cli("note", "Skill ship-alpha: run `make build`, then `make push`", "--scope", "project", env=home, cwd=project).code == 0
    assert run_cli("note", "Skill tidy-user: run `ruff format`, then `ruff check --fix`", "--scope", "global", env=home, cwd=project).code == 0
    assert run_cli("consolidate", env=home, cwd=project).code == 0
    return project


def test_claude_code_skills_user_wide_in_the_user_folder_project_ones_in_the_repo_only_when_asked(home: dict[str, str], tmp_path: Path) -> None:
    project = _project_with_two_skills(home, tmp_path)
    user_folder = Path(home["HOME"]) / ".claude" / "skills"
    before = files(home)

    dry = run_cli("install", "claude-code", "--dry-run", env=home)
    assert dry.code == 0 and "skills: would write tidy-user in " in dry.out and "+name: tidy-user" in dry.out
    assert files(home) == before

    assert run_cli("install", "claude-code", env=home).code == 0
    assert sorted(p.name for p in user_folder.iterdir()) == ["tidy-user"]  # the project's skill is not user-wide
    assert "2. `ruff check --fix`" in (user_folder / "tidy-user" / "SKILL.md").read_text()
    assert (user_folder / "tidy-user" / ".mnemolog-skill").is_file()
    installed = files(home)
    assert run_cli("install", "claude-code", env=home).code == 0 and files(home) == installed

    # Without --project-skills-in-repo the hook gives the project's skill in its context and writes nothing.
    answer = _hook(home, project)
    assert answer is not None and "ship-alpha" in str(answer) and "reloadSkills" not in str(answer)
    assert not (project / ".claude").exists()

    assert run_cli("install", "claude-code", "--project-skills-in-repo", env=home).code == 0
    answer = _hook(home, project)
    assert answer is not None and answer["hookSpecificOutput"]["reloadSkills"] is True  # type: ignore[index]
    repo_skill = project / ".claude" / "skills" / "ship-alpha"
    assert "1. `make build`" in (repo_skill / "SKILL.md").read_text() and (repo_skill / ".mnemolog-skill").is_file()
    assert sorted(p.name for p in (project / ".claude" / "skills").iterdir()) == ["ship-alpha"]
    answer = _hook(home, project)
    assert answer is not None and "reloadSkills" not in str(answer)  # in step: listed at start already

    # Installed again without the option: the repository is left clean; with it, the hook writes it again.
    assert run_cli("install", "claude-code", env=home).code == 0 and not (project / ".claude").exists()
    assert run_cli("install", "claude-code", "--project-skills-in-repo", env=home).code == 0
    assert _hook(home, project) is not None and (repo_skill / "SKILL.md").is_file()

    # Forgetting a value of the user-wide skill takes it out of Claude Code's folder too.
    forgot = run_cli("forget", "ruff check --fix", "--yes", env=home, cwd=project)
    assert forgot.code == 0, forgot.err
    assert not (user_folder / "tidy-user").exists()

    removed = run_cli("install", "claude-code", "--uninstall", env=home)
    assert removed.code == 0, removed.err
    assert "removed mnemolog's skills ship-alpha" in removed.out
    assert not (project / ".claude").exists()
    assert files(home) == before


def test_a_project_skill_forgotten_or_erased_leaves_the_repository_at_once(home: dict[str, str], tmp_path: Path) -> None:
    """Not at the next session there: a repository's skill folder may be committed, and erase means for good."""
    project = _project_with_two_skills(home, tmp_path)
    assert run_cli("note", "Skill deploy-alpha: run `make deploy-kx4`, then `make verify`", "--scope", "project", env=home, cwd=project).code == 0
    assert run_cli("consolidate", env=home, cwd=project).code == 0
    assert run_cli("install", "claude-code", "--project-skills-in-repo", env=home).code == 0
    assert _hook(home, project) is not None
    skills = project / ".claude" / "skills"
    assert sorted(p.name for p in skills.iterdir()) == ["deploy-alpha", "ship-alpha"]

    forgot = run_cli("forget", "make push", "--yes", env=home, cwd=project)
    assert forgot.code == 0, forgot.err
    assert sorted(p.name for p in skills.iterdir()) == ["deploy-alpha"]  # no session started in the repository since

    erased = run_cli("forget", "deploy-kx4", "--erase", "--yes", env=home, cwd=project)
    assert erased.code == 0, erased.err
    assert not (skills / "deploy-alpha").exists()
    assert b"deploy-kx4" not in b"".join(p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git" not in p.parts)


def test_codex_install_puts_user_wide_skills_into_codex_home_skills_and_takes_them_out(home: dict[str, str], tmp_path: Path) -> None:
    _project_with_two_skills(home, tmp_path)
    codex_skills = Path(home["HOME"]) / ".codex" / "skills"
    (codex_skills / ".system").mkdir(parents=True)  # Codex's own system skills stay as they are
    (codex_skills / ".system" / "marker.txt").write_text("codex\n")
    before = files(home)

    done = run_cli("install", "codex", "--no-trust", env=home)
    assert done.code == 0, done.err
    assert f"skills: wrote tidy-user in {codex_skills}" in done.out
    assert sorted(p.name for p in codex_skills.iterdir()) == [".system", "tidy-user"]
    assert not (Path(home["HOME"]) / ".codex" / "memories" / "skills").exists()

    assert run_cli("install", "codex", "--uninstall", env=home).code == 0
    assert files(home) == before
    assert run_cli("install", "codex", "--project-skills-in-repo", env=home).code == 2
