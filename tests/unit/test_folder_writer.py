"""write_folder: whole-folder swap, symlink and path-escape refusal, extensions kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mnemolog.adapters import folder_writer
from mnemolog.adapters.folder_writer import FolderWriteError, write_folder


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_writes_files_and_subfolders(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "memories"
    write_folder({"MEMORY.md": "m\n", "rollout_summaries/x.md": "x\n"}, out)
    assert _tree(out) == {"MEMORY.md": "m\n", "rollout_summaries/x.md": "x\n"}


def test_swap_replaces_the_folder_whole(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"old.md": "old\n", "rollout_summaries/gone.md": "g\n"}, out)
    write_folder({"new.md": "new\n"}, out)
    assert _tree(out) == {"new.md": "new\n"}
    # no staging or old folders are left next to it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]


def test_failure_while_writing_leaves_the_old_folder(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"keep.md": "keep\n"}, out)
    with pytest.raises(OSError):
        # "a" is a file, so "a/b" cannot be created
        write_folder({"a": "file\n", "a/b": "nested\n"}, out)
    assert _tree(out) == {"keep.md": "keep\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]


def test_failure_during_swap_restores_old_folder_and_extensions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "memories"
    write_folder({"keep.md": "keep\n"}, out)
    (out / "extensions").mkdir()
    (out / "extensions" / "note.md").write_text("mine\n")

    def broken_swap(staging: Path, out_dir: Path) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(folder_writer, "_swap", broken_swap)
    with pytest.raises(OSError, match="disk on fire"):
        write_folder({"new.md": "new\n"}, out)
    assert _tree(out) == {"keep.md": "keep\n", "extensions/note.md": "mine\n"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memories"]


def test_refuses_a_symlinked_out_dir(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "memories").symlink_to(target)
    with pytest.raises(FolderWriteError, match="symlink"):
        write_folder({"MEMORY.md": "m\n"}, tmp_path / "memories")
    assert list(target.iterdir()) == []


def test_refuses_a_dangling_symlink_out_dir(tmp_path: Path) -> None:
    (tmp_path / "memories").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FolderWriteError, match="symlink"):
        write_folder({"MEMORY.md": "m\n"}, tmp_path / "memories")
    assert not (tmp_path / "nowhere").exists()


def test_refuses_a_symlinked_parent_we_write_into(tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(FolderWriteError, match="symlink"):
        write_folder({"MEMORY.md": "m\n"}, tmp_path / "link" / "memories")
    with pytest.raises(FolderWriteError, match="symlink"):
        write_folder({"MEMORY.md": "m\n"}, tmp_path / "link" / "new" / "memories")
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    "bad",
    ["../escape.md", "a/../../escape.md", "/etc/passwd", "a//b.md", "./a.md", "", "a\\b.md"],
)
def test_refuses_paths_that_escape(tmp_path: Path, bad: str) -> None:
    with pytest.raises(FolderWriteError):
        write_folder({bad: "x\n"}, tmp_path / "memories")
    assert not (tmp_path / "memories").exists()
    assert not (tmp_path / "escape.md").exists()


def test_preserves_existing_extensions(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"MEMORY.md": "v1\n"}, out)
    notes = out / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    (notes / "2025-01-01T00-00-00-remember.md").write_text("remember this\n")
    write_folder({"MEMORY.md": "v2\n"}, out)
    assert _tree(out) == {
        "MEMORY.md": "v2\n",
        "extensions/ad_hoc/notes/2025-01-01T00-00-00-remember.md": "remember this\n",
    }


def test_rendered_files_may_not_overwrite_existing_extensions(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"MEMORY.md": "v1\n"}, out)
    (out / "extensions").mkdir()
    with pytest.raises(FolderWriteError, match="extensions"):
        write_folder({"extensions/x.md": "x\n"}, out)


def test_a_symlink_inside_the_old_folder_is_not_written_through(tmp_path: Path) -> None:
    out = tmp_path / "memories"
    write_folder({"MEMORY.md": "v1\n"}, out)
    victim = tmp_path / "victim.md"
    victim.write_text("untouched\n")
    (out / "rollout_summaries").mkdir()
    (out / "rollout_summaries" / "x.md").symlink_to(victim)
    write_folder({"rollout_summaries/x.md": "new\n"}, out)
    assert victim.read_text() == "untouched\n"
    assert not os.path.islink(out / "rollout_summaries" / "x.md")
