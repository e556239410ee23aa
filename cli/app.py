"""The mnemolog command line: thin commands over the pipeline and the store.

The commands are loaded lazily: ``mnemolog --help`` lists them from the table
below without importing any command module, and ``mnemolog NAME`` imports only
the module that holds NAME (and, inside the command, only what it needs). So a
command starts without paying for the store, pydantic models, psycopg, openai,
the tokenizer or the MCP SDK unless it uses them. The typer application is in
``cli/command_group.py``; the SessionStart hook (``context --hook``) runs
without it (``cli/context_command.py``): this module imports no typer.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from mnemolog.cli.output import Exit, UserError, environment_failure, errors, store_locked


class Entry(NamedTuple):
    """Where a command lives and the line ``mnemolog --help`` shows for it."""

    module: str  # in mnemolog.cli; its register(app) adds the command
    help: str  # the first paragraph of the command's help (a unit test keeps them equal)


# In the order --help lists them. A new command goes here and in its module's register().
COMMANDS: dict[str, Entry] = {
    "doctor": Entry("store_commands", "Which store is in use, where, how many events it holds, and whether projections are caught up."),
    "status": Entry("store_commands", "Coverage and health: sessions seen, eligible, waiting (until when), extracted, with nothing, failed (and why), per agent and project."),
    "config": Entry("store_commands", "The effective configuration and where each value came from (secrets masked)."),
    "rebuild": Entry("store_commands", "Drop every projection and replay the whole log."),
    "follow": Entry("store_commands", "Keep the projections up to date while other processes write (LISTEN/NOTIFY on PostgreSQL, polling on SQLite)."),
    "ingest": Entry("pipeline_commands", "Read agent sessions into the log (incremental: unchanged files add nothing)."),
    "extract": Entry("pipeline_commands", "Phase 1: extract what is worth remembering from each eligible session."),
    "consolidate": Entry("pipeline_commands", "Phase 2: consolidate the selected extractions into memory items, as audited edits."),
    "render": Entry("pipeline_commands", "Render the memory folder (Codex's layout) from the projections."),
    "run": Entry("pipeline_commands", "The whole pipeline: ingest, extract, consolidate, render."),
    "capture": Entry("capture_commands", "Put finished sessions into memory now: ingest, extract and consolidate them (the SessionEnd hook runs this)."),
    "install": Entry("install_commands", "Connect an agent to mnemolog: SessionStart/UserPromptSubmit/SessionEnd hooks and the MCP server, with absolute paths, backups and a diff."),
    "tokens": Entry("pipeline_commands", "Tokens phase 1 sends per session, against Codex's plain serialisation; checks nothing important is lost."),
    "eval": Entry("eval_commands", "Run the whole pipeline on an eval corpus in a fresh temporary store and score what each project's next session gets."),
    "forget": Entry("forget_commands", "Forget for good: a value (tombstone), a session or an item. Enforced by code at every read and write."),
    "lift": Entry("forget_commands", "Undo a tombstone (as an event) and restore the session texts and notes it scrubbed. Retired items stay retired."),
    "prune": Entry("forget_commands", "The retention sweep: prune stale, unselected extractions; retire items left without evidence."),
    "reset": Entry("forget_commands", "Withdraw all memory, as events (the log and its history stay)."),
    "explain": Entry("history_commands", "The story of one memory, read only from the log."),
    "audit": Entry("history_commands", "What one consolidation changed, edit by edit, and what code overrode or rejected."),
    "history": Entry("history_commands", "Memory at a past moment, rebuilt from the log; or what one session was served (--session)."),
    "context": Entry("memory_commands", "What an agent receives when a session starts: how to use memory, and the memory of this project and the user."),
    "search": Entry("memory_commands", "Search memory and the history behind it (this project's past sessions), by words and by meaning, best first."),
    "show": Entry("memory_commands", "One memory item with its status, trust, validity, usage and evidence."),
    "cite": Entry("memory_commands", "Record that an agent used memory: Codex citation blocks and [item:<id>] markers in its output."),
    "note": Entry("memory_commands", "Leave a note the next consolidation applies (append-only); --forget places a tombstone now; --withdraw takes a note back."),
    "notes": Entry("memory_commands", "The notes left with `note` (and MCP, and notes files): id, intent, scope, state, source and text."),
    "list": Entry("list_commands", "List items, sessions, notes, tombstones or consolidation runs, with filters and short ids."),
    "mcp": Entry("memory_commands", "Serve the read path as MCP tools over stdio (project from the client's roots, else --cwd)."),
    "review": Entry("review_commands", "Accept, reject or doubt a memory item (a Reviewed event; explain shows it)."),
    "edit": Entry("edit_commands", "Rewrite a memory item's text (an Edited event; secrets are redacted, forgotten values refused)."),
    "pin": Entry("edit_commands", "Pin a memory item: it comes first in context and the folder, and no consolidation retires it (--off unpins)."),
    "scope": Entry("edit_commands", "Change a memory item's scope: user-wide (--user) or one project (--project P); a ScopeChanged event."),
    "serve": Entry("serve_commands", "Serve a local web page to see and steer memory (127.0.0.1 only, unless given a token)."),
}

def main(args: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and an exit code.

    ``args`` default to ``sys.argv[1:]``; tests pass them to run the CLI in process.
    """
    argv = sys.argv[1:] if args is None else list(args)
    try:
        code = _run(argv)
    except UserError as error:
        errors.print(f"[red]error:[/red] {error}", highlight=False)
        sys.exit(int(error.code))
    except Exception as error:
        _exit_for(error)
        raise
    sys.exit(code if isinstance(code, int) else 0)


def _run(argv: list[str]) -> object:
    """Run the command: ``context --hook``, ``search`` and ``mcp`` without typer when their options are plain, anything else through typer."""
    if argv and not argv[0].startswith("-") and argv[0] not in COMMANDS:
        raise UserError(_unknown_command(argv[0]), Exit.USAGE)
    if argv[:1] == ["context"]:
        from mnemolog.cli.context_command import context, hook_arguments

        given = hook_arguments(argv)
        if given is not None:
            context(**given)
            return None
    if argv[:1] == ["search"]:
        from mnemolog.cli.search_command import search, search_arguments

        plain = search_arguments(argv)
        if plain is not None:
            search(**plain)
            return None
    if argv[:1] == ["mcp"]:
        from mnemolog.cli.mcp_handshake import mcp_arguments, start

        cwd = mcp_arguments(argv)
        if cwd is not None:
            start(**cwd)
            return None
    from mnemolog.cli.command_group import app

    return app(args=argv, prog_name="mnemolog", standalone_mode=False)


def _unknown_command(name: str) -> str:
    """The error for a command that is not one, naming the closest when one is close (a typo)."""
    from difflib import get_close_matches

    from rich.markup import escape

    close = get_close_matches(name, COMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'?" if close else "`mnemolog --help` lists the commands"
    return escape(f"unknown command {name[:60]!r}; {hint}")


def _exit_for(error: Exception) -> None:
    """Exit as a user expects for an error the command did not turn into a UserError; return to let it be raised."""
    if "typer" in sys.modules:  # only typer raises its own errors, and then it is loaded
        import typer

        # typer vendors click: its usage errors are typer._click exceptions, not click's.
        from typer._click.exceptions import ClickException

        if isinstance(error, typer.Abort):
            errors.print("aborted")
            sys.exit(1)
        if isinstance(error, ClickException):
            error.show()
            sys.exit(error.exit_code)
    if store_locked(error):  # another process held the store past SQLite's time-out: nothing was written
        errors.print("busy: another mnemolog process kept the store locked; nothing was lost: run the command again", highlight=False, markup=False)
        sys.exit(int(Exit.BUSY))
    message = environment_failure(error)  # a full disk: one line, not a traceback
    if message is not None:
        errors.print(f"error: {message}", highlight=False, markup=False)
        sys.exit(int(Exit.ERROR))
