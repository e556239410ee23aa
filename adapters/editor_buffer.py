"""Editing an item's text in the user's editor (``$VISUAL``, else ``$EDITOR``), as ``git commit`` edits a message.

The buffer is the item's title on the first line, a blank line, then its
text; an untitled item's buffer starts with the blank line. On reading it
back, the first line is the title when the second line is blank (or the
first line is blank itself: no title); otherwise the whole buffer is the
text and the title stays as it was. The file is created owner-only (mode
0600) in the temporary folder and removed after, whatever the editor did.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path


class EditorFailed(Exception):
    """The editor could not be started or exited non-zero: nothing is to be written."""


def item_buffer(title: str, text: str) -> str:
    """The buffer an item is edited in: its title, a blank line, its text."""
    return f"{title.strip()}\n\n{text.strip()}\n"


def read_buffer(buffer: str) -> tuple[str | None, str]:
    """The (title, text) a saved buffer holds; the title is None when the buffer gives none (keep it)."""
    lines = buffer.replace("\r\n", "\n").rstrip().split("\n") if buffer.strip() else []
    if len(lines) >= 2 and (not lines[0].strip() or not lines[1].strip()):
        return lines[0].strip(), "\n".join(lines[1:]).strip()
    return None, "\n".join(lines).strip()


def editor_command(env: dict[str, str] | None = None) -> str | None:
    """The editor the user chose: ``$VISUAL``, else ``$EDITOR`` (None when neither is set)."""
    environ = os.environ if env is None else env
    for name in ("VISUAL", "EDITOR"):
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


def edit_in_editor(initial: str, editor: str) -> str:
    """Open ``initial`` in ``editor`` (a shell-style command line, as git reads it) and return what was saved.

    Raises ``EditorFailed`` when the editor cannot be started or exits non-zero.
    """
    handle, name = tempfile.mkstemp(prefix="mnemolog-item-", suffix=".md")  # mkstemp: mode 0600
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(initial)
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except (OSError, ValueError) as error:
            raise EditorFailed(f"cannot start the editor {editor!r}: {error}") from error
        if done.returncode != 0:
            raise EditorFailed(f"the editor {editor!r} exited with status {done.returncode}")
        return path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
