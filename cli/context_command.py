"""The ``context`` command's work, and the SessionStart hook's start without typer.

An agent runs ``mnemolog context --hook`` at the start of every session, so its
start-up is waited for each time. typer builds its parameters with pydantic
type adapters on every run and costs about as much as the store's opening:
``hook_arguments`` reads exactly the options of ``context --hook`` (no help, no
abbreviation, each option once, values as typer takes them) and anything else
goes to typer (``cli/app.py: main``), which then prints the same usage error
or help as always. Both ways end in ``context`` below.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from mnemolog.cli.command_store import project_of, store
from mnemolog.cli.output import Exit, UserError, emit_json, errors

# The options of `context` (memory_commands.context): flags, and those taking a value, by parameter.
_FLAGS = {"--hook": "hook", "--json": "json_out"}
PROMPT_EVENT = "UserPromptSubmit"  # the agents' hook event on each prompt (Claude Code and Codex name it alike)
_VALUES = {"--cwd": "cwd", "--project": "project_key", "--agent": "agent", "--budget": "budget", "--session": "session"}


def hook_arguments(args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of ``context`` for ``context --hook …`` as typer would give them; None for anything else."""
    from mnemolog.cli.plain_arguments import plain_arguments

    if "--hook" not in args:
        return None
    defaults = {"cwd": None, "project_key": None, "hook": False, "agent": None, "budget": None, "session": None, "json_out": False}
    return plain_arguments(args, "context", _FLAGS, _VALUES, defaults, numbers=("budget",), paths=("cwd",))


def stdin_text() -> str:
    """What was piped on stdin ("" from a terminal or none)."""
    return "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()


def hook_input() -> dict[str, Any]:
    """The JSON object an agent's hook gives on stdin ({} when there is none or it is not an object)."""
    text = stdin_text()
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def context(
    cwd: Path | None,
    project_key: str | None,
    hook: bool,
    agent: str | None,
    budget: int | None,
    session: str | None,
    json_out: bool,
) -> None:
    """What an agent receives when a session starts, printed (see ``memory_commands.context`` for the options)."""
    from mnemolog.adapters.agent_context import context_for

    if agent is not None and agent not in ("codex", "claude-code"):
        raise UserError(f"unknown agent {agent!r} (expected codex or claude-code)", Exit.USAGE)
    if hook and os.environ.get("MNEMOLOG_MODEL_CALL"):
        return  # an agent CLI mnemolog runs as a model (adapters/agent_cli_models.py): no memory for it
    folder = cwd
    given = hook_input() if hook else {}
    hook_session = given.get("session_id")
    if session is None and isinstance(hook_session, str):
        session = hook_session
    if folder is None and hook:
        hook_folder = given.get("cwd")
        folder = Path(hook_folder) if isinstance(hook_folder, str) and hook_folder.strip() else None
        if folder is not None and not folder.is_dir():
            folder = None  # the session's folder is gone: read the current one
    project = project_of(folder, project_key)
    if hook and given.get("hook_event_name") == PROMPT_EVENT:
        _prompt_recall(given.get("prompt"), project, session, budget, json_out)
        return
    with store() as s:
        result = context_for(s, project, budget, agent if hook else None, session=session, surface="hook" if hook else "context")
        # Claude Code with `install claude-code --project-skills-in-repo`: this session's repository gets its skills.
        reload_skills = hook and agent == "claude-code" and _repo_skills(s, project, folder or Path.cwd())
    if json_out and not hook:
        from mnemolog.domain.services.injections import context_dict

        emit_json(context_dict(result))
        return
    from mnemolog.adapters.hook_json import hook_answer

    if hook:
        from mnemolog.domain import served_memory

        if not result.item_ids and not result.more:
            if reload_skills and json_out:
                emit_json(hook_answer(None, True))
            return  # nothing remembered: the hook adds nothing to the session
        # Marked, so that reading this session back never takes it for new knowledge.
        text = served_memory.wrap(result.text)
    else:
        text = result.text
    if json_out:
        emit_json(hook_answer(text, reload_skills))
    else:
        sys.stdout.write(text)


def _prompt_recall(prompt: Any, project: str, session: str | None, budget: int | None, json_out: bool) -> None:
    """The prompt hook: recall bearing on the prompt that this session was not given yet, printed as the hook's added context."""
    from mnemolog.domain import served_memory
    from mnemolog.domain.services.injections import served_prompt_recall

    if not isinstance(prompt, str) or not prompt.strip():
        return
    with store() as s:
        limit = s.settings.prompt_recall_tokens if budget is None else budget
        if limit <= 0:
            return  # prompt recall turned off
        found = served_prompt_recall(s, s.recall(), s.ports.tokenizer, prompt, project, session=session, budget=limit)
    if not found.text:
        return  # nothing bears on this prompt: the hook adds nothing
    text = served_memory.wrap(found.text)  # marked, so that reading the session back never takes it for new knowledge
    if json_out:
        from mnemolog.adapters.hook_json import hook_answer

        emit_json(hook_answer(text, False, PROMPT_EVENT))
    else:
        sys.stdout.write(text)


def _repo_skills(s: Any, project: str, folder: Path) -> bool:
    """Bring the session's repository's ``.claude/skills`` in step (when installed so); whether it changed."""
    from mnemolog.adapters.agent_skills import sync_repo

    try:
        synced = sync_repo(s, project, str(folder))
    except OSError as error:  # a hook never fails the session: the context still goes out
        errors.print(f"mnemolog: project skills not written: {error}", highlight=False, markup=False)
        return False
    return synced is not None and synced.changes
