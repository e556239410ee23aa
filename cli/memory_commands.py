"""The read path: context, search, show, cite, note, notes, mcp.

Every read is for the project of a working folder (``--cwd``, default the
current one): items scoped to it or to the user (global), never another
project's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, UserError, console, emit_json, errors
from mnemolog.cli.search_command import validity

JSON = typer.Option(False, "--json", help="Print JSON.")
CWD = options.CWD
PROJECT = options.PROJECT
_scope = options.project_of


def context(
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    hook: bool = typer.Option(False, "--hook", help="Run as an agent's SessionStart hook: read its JSON on stdin (the session's cwd); print nothing when nothing is remembered."),
    agent: str | None = typer.Option(None, "--agent", help="With --hook: the agent the instructions are written for (codex or claude-code)."),
    budget: int | None = typer.Option(None, "--budget", help="Token budget (default: the context_tokens setting)."),
    session: str | None = typer.Option(None, "--session", help="The agent's session id, recorded with what it was served (`history --session`)."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON: each item with its rank, why it ranks there and its tokens, the total tokens and the budget; with --hook, the SessionStart hook JSON (hookSpecificOutput.additionalContext)."),
) -> None:
    """What an agent receives when a session starts: how to use memory, and the memory of this project and the user."""
    # Its work lives without typer: `context --hook` (the SessionStart hook) starts without it (cli/context_command.py).
    from mnemolog.cli.context_command import context as serve

    serve(cwd, project_key, hook, agent, budget, session, json_out)


def _title(data: dict[str, Any]) -> str:
    """An item's title, or, untitled, the start of its text."""
    from mnemolog.domain.context_lines import one_line

    if data["title"].strip():
        return str(data["title"])
    text = one_line(data["text"] or "")
    return "(untitled) " + (text if len(text) <= 80 else text[:79] + "\u2026")


def search(
    query: str = typer.Argument(..., help="Words to look for, or a question."),
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    kind: str | None = typer.Option(None, "--kind", help="Only items of this kind: preference, knowledge, failure, task, skill."),
    only: str | None = typer.Option(None, "--only", help="Only 'items' (memory) or 'history' (excerpts of past sessions)."),
    limit: int = typer.Option(10, "--limit", min=1, max=200, help="At most N hits."),
    json_out: bool = JSON,
) -> None:
    """Search memory and the history behind it (this project's past sessions), by words and by meaning, best first."""
    # Its work lives without typer: a plain `search` starts without it (cli/search_command.py).
    from mnemolog.cli.search_command import search as run

    run(query, cwd, project_key, kind, only, limit, json_out)


def _show_excerpt(reference: str, project: str, json_out: bool) -> None:
    """``show history:<session>:<n>``: the excerpt with the ones around it."""
    from mnemolog.domain.services.recall import read_excerpt
    from rich.markup import escape

    with store() as s:
        excerpts = read_excerpt(s.recall(), s.matcher(), reference, project)
    if excerpts is None:
        raise UserError(f"no history excerpt {escape(reference)} in {project}", Exit.NOT_FOUND)
    wanted = reference.strip().strip("[]").strip()
    if json_out:
        emit_json({
            "excerpt": next(e.as_dict() for e in excerpts if e.reference() == wanted),
            "around": [e.as_dict() for e in excerpts if e.reference() != wanted],
        })
        return
    for excerpt in excerpts:
        first, last = excerpt.first_line, excerpt.last_line
        lines = f":{first}-{last}" if first is not None else ""
        mark = ">>" if excerpt.reference() == wanted else "  "
        date = excerpt.date.date().isoformat() if excerpt.date else "?"
        console.print(f"{mark} {excerpt.reference()}  {excerpt.agent}  {date}  {excerpt.path}{lines}", highlight=False, markup=False)
        for line in excerpt.text.splitlines():
            console.print(f"     {line}", highlight=False, markup=False, soft_wrap=True)


def _skill_lines(skill: dict[str, Any] | None) -> list[str]:
    """A skill's name, numbered steps and what it relies on, as show prints them."""
    if not skill:
        return []
    lines = [f"skill     {skill['name']}   (skills/{skill['name']}/SKILL.md)"]
    for number, step in enumerate(skill["steps"], start=1):
        parts = [f"`{step['command']}`" if step["command"] else "", step["action"]]
        lines.append(f"  {number}. " + " - ".join(part for part in parts if part))
    if skill["relies_on"]:
        lines.append("relies on " + ", ".join(skill["relies_on"]))
    return [*lines, ""]


def show(
    item: str = typer.Argument(..., help="An item id or a unique prefix of one (as list and search print it), [item:<id>], or a history excerpt's history:<session>:<n>."),
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    json_out: bool = JSON,
) -> None:
    """One memory item with its status, trust, validity, usage and evidence."""
    from mnemolog.domain.context_lines import one_line
    from mnemolog.domain.services import read
    from rich.markup import escape

    project = _scope(cwd, project_key)
    if item.strip().strip("[]").startswith("history:"):
        _show_excerpt(item, project, json_out)
        return
    with store() as s:
        item_id = options.resolve_id(s.reads(), "items", item, project)
        found = read.show(s.reads(), s.matcher(), str(item_id), project)
    if found is None:
        raise UserError(f"no item {escape(item)} in {project} (or global)", Exit.NOT_FOUND)
    data = found.as_dict()
    if json_out:
        emit_json(data)
        return
    out = [
        f"item      {data['id']}",
        f"kind      {data['kind']}   scope {data['scope']}   group {data['task_group'] or '-'}",
        f"status    {data['status']}   trust {data['trust']}   revision {data['revision']}",
        f"valid     {validity(data).removeprefix('valid ')}",
        f"updated   {data['updated_at']}   used {data['use_count']}x (last {data['last_used'] or 'never'})",
        f"title     {_title(data)}",
        f"keywords  {', '.join(data['keywords']) or '-'}",
        "",
        data["text"] or "(no text: the item is not current; `mnemolog explain` reads its history)",
        "",
        *_skill_lines(data.get("skill")),
        f"evidence ({len(data['evidence'])} sessions in this project"
        + (f", {data['evidence_in_other_projects']} elsewhere" if data["evidence_in_other_projects"] else "")
        + ")",
    ]
    for e in data["evidence"]:
        out.append(f"- {e['source']} {e['native_id']}  {e['updated_at'] or ''}  cwd={e['cwd']}")
        if e["summary"]:
            out.append("    " + one_line(e["summary"])[:400])
        for span in (s for s in data["spans"] if s["session_id"] == e["session"]):
            where = f"line {span['line']}" if span["line"] else "line ?"
            out.append(f"    {where}: \u201c{one_line(span['quote'])}\u201d")
    sys.stdout.write("\n".join(out) + "\n")


def cite(
    file: Path | None = typer.Argument(None, help="A file holding the agent's output (default: stdin)."),
    session: Path | None = typer.Option(None, "--session", help="A recorded session file (Codex rollout or Claude Code transcript)."),
    hook: bool = typer.Option(False, "--hook", help="Read a Claude Code hook's JSON on stdin and cite its transcript."),
    citing_session: str | None = typer.Option(None, "--citing-session", help="Id of the session that cites (kept with the citation)."),
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    json_out: bool = JSON,
) -> None:
    """Record that an agent used memory: Codex citation blocks and [item:<id>] markers in its output."""
    from mnemolog.adapters.scope import project_scope
    from mnemolog.adapters.session_files import SessionReadError
    from mnemolog.domain.services import cite as citing

    # Items of another project than the citing one are not recorded (as `show` does not show them).
    project = _scope(cwd, project_key) if (cwd is not None or project_key is not None or (session is None and not hook)) else None
    with store() as s:
        uow = s
        folder = s.ports.folder_reader
        if hook:
            from mnemolog.cli.context_command import hook_input

            path = hook_input().get("transcript_path")
            if not isinstance(path, str) or not path:
                raise UserError("the hook input on stdin has no transcript_path")
            session = Path(path)
        if session is not None:
            try:
                transcript = s.ports.session_source.read(session)
            except SessionReadError as error:
                raise UserError(str(error)) from error
            meta = transcript.meta
            session_project = project or project_scope(meta.git_remote, meta.cwd)
            report = citing.cite_session_file(uow, transcript, folder, session_project)
        else:
            if file is not None:
                try:
                    text = file.read_text(encoding="utf-8", errors="replace")
                except OSError as error:
                    raise UserError(f"cannot read {file}: {error}") from error
            else:
                from mnemolog.cli.context_command import stdin_text

                text = stdin_text()
            report = citing.record_citation(uow, text, "cli", citing_session=citing_session, read_file=folder, project=project)
    if json_out:
        emit_json(report.as_dict())
    elif report.citations:
        console.print(
            f"recorded {report.citations} citation(s): {len(report.item_ids)} items, "
            f"{len(report.session_ids)} sessions",
            highlight=False,
        )
    else:
        console.print("no new citation found (nothing recorded)")
    where = f" in {project} (or global)" if project else ""
    for unknown in report.unknown_items:
        errors.print(f"[yellow]warning:[/yellow] no item {unknown}{where}: not recorded", highlight=False)


def note(
    text: list[str] = typer.Argument(None, help="What to remember, correct or forget."),
    correct: bool = typer.Option(False, "--correct", help="A correction of what memory says."),
    forget: bool = typer.Option(False, "--forget", help="Forget this value (places a tombstone; the text is not stored)."),
    withdraw: str | None = typer.Option(None, "--withdraw", metavar="NOTE_ID", help="Withdraw a note (its id, or a prefix as `notes` prints)."),
    reason: str | None = typer.Option(None, "--reason", help="Why the note is withdrawn (kept in the log)."),
    scope: str | None = typer.Option(None, "--scope", help="project | global (default: project, or global when the note says it holds for all your projects; global for --forget)."),
    cwd: Path | None = CWD,
    import_files: bool = typer.Option(False, "--import-files", help="Record Codex's notes files (extensions/ad_hoc/notes/*.md) from the memory folder."),
    folder: Path | None = typer.Option(None, "--folder", help="The memory folder for --import-files (default: the configured one)."),
    force: bool = typer.Option(False, "--force", help="With --forget: forget a value shorter than 3 characters."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --forget: do not ask for confirmation (a terminal asks first)."),
    json_out: bool = JSON,
) -> None:
    """Leave a note the next consolidation applies (append-only); --forget places a tombstone now; --withdraw takes a note back."""
    from mnemolog.domain.services import notes as note_service

    if correct and forget:
        raise UserError("choose one of --correct and --forget", Exit.USAGE)
    if scope not in (None, "project", "global"):
        raise UserError("--scope is project or global", Exit.USAGE)
    words = " ".join(text or []).strip()
    if withdraw is not None:
        if words or correct or forget or import_files:
            raise UserError("--withdraw takes a note id and nothing else", Exit.USAGE)
        _withdraw(withdraw, reason, json_out)
        return
    if reason is not None:
        raise UserError("--reason goes with --withdraw", Exit.USAGE)
    if import_files:
        if words:
            raise UserError("--import-files takes no text", Exit.USAGE)
        with store() as s:
            imported = note_service.import_note_files(s, s.ports.note_folder_at(folder), s.ports.redactor)
        if json_out:
            emit_json(imported.as_dict())
        else:
            console.print(
                f"notes files: {len(imported.imported)} imported, {len(imported.already)} already recorded, "
                f"{len(imported.skipped)} skipped", highlight=False,
            )
            for skip in imported.skipped:
                errors.print(f"[yellow]skipped[/yellow] {skip['file']}: {skip['reason']}", highlight=False, markup=True)
        return
    if not words:
        raise UserError("a note needs text", Exit.USAGE)
    chosen = scope or ("global" if forget else "project")
    target = "global" if chosen == "global" else _scope(cwd)
    if forget:
        _forget(words, target, force=force, yes=yes, json_out=json_out)
        return
    if force or yes:
        raise UserError("--force and --yes go with --forget", Exit.USAGE)
    intent = "correct" if correct else "remember"
    with store() as s:
        try:
            added = note_service.add_note(s, words, intent, target, s.ports.redactor, scope_chosen=scope is not None)
        except ValueError as error:  # nothing left once secrets and forgotten values are cut out
            raise UserError(str(error), Exit.USAGE) from error
    if json_out:
        emit_json(added.as_dict())
    else:
        console.print(f"noted ({intent}, {added.scope}): the next consolidation applies it (note {added.note_id})", highlight=False)


def _withdraw(reference: str, reason: str | None, json_out: bool) -> None:
    from mnemolog.domain.services import notes as note_service
    from rich.markup import escape

    with store() as s:
        try:
            done = note_service.withdraw_note(s, reference, reason or note_service.DEFAULT_WITHDRAW_REASON)
        except note_service.UnknownNote as error:
            raise UserError(f"no note {escape(reference)} (or the prefix names more than one)", Exit.NOT_FOUND) from error
    if json_out:
        emit_json(done.as_dict())
    elif done.already:
        console.print(f"note {done.note_id} was already withdrawn", highlight=False)
    else:
        console.print(
            f"withdrew note {done.note_id}; {len(done.items_leaving)} items resting on it alone leave memory at the next run",
            highlight=False,
        )


def _forget(value: str, scope: str, *, force: bool, yes: bool, json_out: bool) -> None:
    """``forget VALUE`` by another name: the same minimum length, the same plan, asked about on a terminal, then applied."""
    from mnemolog.cli.forget_commands import _on_terminal, checked_value, forgot_line, planned
    from mnemolog.domain.services.forget import plan_forget_value

    text = checked_value(value, force)
    with store() as s:
        try:
            plan = plan_forget_value(s, text, scope, "forget requested with `mnemolog note --forget`")
        except ValueError as error:
            raise UserError("the value has no words to match", Exit.USAGE) from error
        if not planned(plan, dry_run=False, ask=not yes and _on_terminal(), json_out=json_out):
            return
        result = plan.apply(s)
    if json_out:
        emit_json(result.as_dict())
    else:
        console.print(forgot_line(result), highlight=False)


def notes(
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    all_: bool = typer.Option(False, "--all", help="Every project's notes (default: this project's and the global ones)."),
    pending: bool = typer.Option(False, "--pending", help="Only notes no consolidation has applied yet."),
    json_out: bool = JSON,
) -> None:
    """The notes left with `note` (and MCP, and notes files): id, intent, scope, state, source and text."""
    from mnemolog.domain.context_lines import one_line

    if all_ and (cwd is not None or project_key is not None):
        raise UserError("--all excludes --cwd and --project", Exit.USAGE)
    project = None if all_ else _scope(cwd, project_key)
    with store() as s:
        rows = s.reads().notes(project, include_done=not pending)
    if json_out:
        emit_json(
            {
                "project": project,
                "notes": [
                    {
                        "id": str(n.note_id), "intent": n.intent, "scope": n.scope, "state": n.state, "source": n.source,
                        "written_at": n.written_at, "applied_by": str(n.applied_by) if n.applied_by else None, "text": n.text,
                    }
                    for n in rows
                ],
            }
        )
        return
    if not rows:
        where = "any project" if project is None else f"{project} (or global)"
        console.print(f"no notes in {where}", highlight=False, markup=False)
        return
    for n in rows:
        line = one_line(n.text)
        line = line if len(line) <= 100 else line[:99] + "…"
        console.print(
            f"{str(n.note_id)[:8]}  {n.intent:<8} {n.state:<9} {n.scope}  {n.source}  {line}",
            highlight=False, markup=False,
        )


def mcp(cwd: Path | None = CWD) -> None:
    """Serve the read path as MCP tools over stdio (project from the client's roots, else --cwd)."""
    # Its work lives without typer: `mcp` starts without it (cli/mcp_handshake.py).
    from mnemolog.cli.mcp_handshake import start

    start(str(cwd) if cwd is not None else None)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(context)
    app.command()(search)
    app.command()(show)
    app.command()(cite)
    app.command()(note)
    app.command()(notes)
    app.command()(mcp)
