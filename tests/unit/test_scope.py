"""Project scope keys from git remotes and working directories."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemolog.adapters.scope import normalise_remote, project_scope


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:a/b.git",
        "https://github.com/a/b",
        "https://github.com/a/b/",
        "ssh://git@github.com/a/b",
        "ssh://git@github.com:22/a/b.git",
        "https://user:token@github.com/a/b.git",
        "https://GitHub.COM/a/b.git",
        "git+ssh://git@github.com/a/b.git",
    ],
)
def test_every_spelling_of_a_remote_gives_one_key(remote: str) -> None:
    assert project_scope(remote, "/anywhere") == "git:github.com/a/b"


def test_credentials_never_reach_the_key() -> None:
    key = project_scope(
        "https://deploy:s3cr3t-t0ken@gitlab.example.com:8443/team/sub/repo.git", None
    )
    assert key == "git:gitlab.example.com/team/sub/repo"
    assert "s3cr3t" not in key


def test_path_case_is_kept_host_case_is_not() -> None:
    assert normalise_remote("git@GitHub.com:Owner/Repo.git") == "github.com/Owner/Repo"


def test_local_remotes_have_no_host() -> None:
    assert normalise_remote("/srv/git/repo.git") is None
    assert normalise_remote("file:///srv/git/repo.git") is None
    assert normalise_remote(r"C:\repos\thing") is None


def test_without_remote_the_repo_root_is_used(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    assert project_scope(None, str(deep)) == f"path:{root}"
    assert project_scope("", str(root)) == f"path:{root}"


def test_a_worktree_with_a_git_file_counts_as_a_repo(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert project_scope(None, str(worktree)) == f"path:{worktree}"


def test_cwd_not_on_this_machine_is_used_as_is() -> None:
    assert project_scope(None, "/Users/someone/repos/app/") == "path:/Users/someone/repos/app"


def test_neither_remote_nor_cwd_is_unknown() -> None:
    assert project_scope(None, None) == "unknown"
    assert project_scope(None, "  ") == "unknown"
