"""Commands that read only the log: explain, audit, history."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.options import parse_since, parse_time
from mnemolog.cli.output import Exit, UserError, console, emit_json

if TYPE_CHECKING:
    from mnemolog.domain.history import ItemMatch, ItemStory, ItemText, RunAudit, ShownSkill

JSON = typer.Option(False, "--json", help="Print JSON.")


def _as_uuid(text: str) -> UUID | None:
    try:
        return UUID(text.strip())
    except ValueError:
        return None


def _agent_ids(story: ItemStory) -> dict[str, str]:
    """Internal session id -> the agent's own id: users see one id per session (the internal one is in --json)."""
    return {s.session: s.native_id for s in story.sessions if s.native_id}


def _with_agent_ids(text: str, ids: Mapping[str, str]) -> str:
    for internal, native in ids.items():
        text = text.replace(internal, native)
    return text


def _item_prefix(s: Any, target: str) -> UUID | None:
    """The item a short id names (``abcd1234``, ``[item:abcd1234]``); None when ``target`` is words, not an id."""
    from mnemolog.domain.ids import UnknownId, normalised

    text = normalised(target)
    if len(text) < 4 or any(c not in "0123456789abcdef-" for c in text):
        return None
    try:
        return options.resolve_id(s.reads(), "items", target) if text else None
    except UserError as error:
        if isinstance(error.__cause__, UnknownId):
            return None  # hex-looking words: search the texts
        raise


def steps_line(skill: ShownSkill) -> str:
    """A skill's name and steps on one line: ``name: 1. `a`; 2. `b` ...``."""
    steps = [" - ".join(part for part in (f"`{s.command}`" if s.command else "", s.action) if part) for s in skill.steps]
    return f"{skill.name}: " + "; ".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))


def _print_change(before: ItemText | None, after: ItemText | None) -> None:
    """An edit's text (and a skill's steps) before and after."""
    for state, label in ((before, "before:"), (after, "after: ")):
        if not state:
            continue
        console.print(f"      {label} {state.text}", highlight=False, markup=False)
        if state.skill:
            console.print(f"      {label} steps {steps_line(state.skill)}", highlight=False, markup=False)


def _print_story(story: ItemStory) -> None:
    from mnemolog.domain.history import ItemChange, Tombstoned

    ids = _agent_ids(story)
    now = story.now
    console.print(f"item {story.item} ({story.kind}, scope {story.scope}): {now.status}, trust {now.trust}", highlight=False, markup=False)
    console.print(f"  {now.title or ''} {now.text or ''}".rstrip(), highlight=False, markup=False)
    if now.skill:
        console.print(f"  skill {steps_line(now.skill)}", highlight=False, markup=False)
    for session in story.sessions:
        console.print(
            f"  from {session.agent or '?'} session {session.native_id or session.session} "
            f"({session.state}) cwd={session.cwd} path={session.path} updated={session.updated_at}",
            highlight=False,
        )
        for extraction in session.extractions:
            console.print(f"    extracted {extraction.at} by {extraction.model}", highlight=False, markup=False)
    for span in story.spans:
        where = f"line {span.line}" if span.line else "line ?"
        console.print(
            f"  evidence: {span.agent or '?'} session {span.native_id or '?'} {where}: \u201c{span.quote}\u201d",
            highlight=False, markup=False,
        )
    for entry in story.timeline:
        line = f"  {entry.at}  {entry.action}"
        if isinstance(entry, ItemChange):
            line += f" by {entry.by}" if entry.by else ""
            line += f" in run {entry.consolidation}" if entry.consolidation else ""
            if entry.reason:
                line += f": {_with_agent_ids(entry.reason, ids)}"
            if entry.scope:
                line += f" {entry.previous} -> {entry.scope}"
            if entry.editor:
                line += f" ({entry.editor})"
        elif isinstance(entry, Tombstoned):
            line += f" {entry.tombstone}"
        console.print(line, highlight=False, markup=False)
        if isinstance(entry, ItemChange):
            _print_change(entry.before, entry.after)
    cites = story.citations
    console.print(f"  cited {cites.count} time(s){', last ' + cites.last if cites.last else ''}", highlight=False, markup=False)


CWD = typer.Option(None, "--cwd", help="The working folder whose project is read (default: the current folder).")
PROJECT = typer.Option(None, "--project", help="A project scope key instead of --cwd (git:host/owner/repo or path:/dir).")


def explain(
    target: str = typer.Argument(..., help="An item id (or a unique prefix, or [item:<id>]), or words from its current or past text."),
    cwd: Path | None = CWD,
    project_key: str | None = PROJECT,
    json_out: bool = JSON,
) -> None:
    """The story of one memory, read only from the log.

    Scoped like show: this project's and global items only.
    """
    from dataclasses import replace

    from mnemolog.cli.memory_commands import _scope
    from rich.markup import escape

    project = _scope(cwd, project_key)
    with store() as s:
        matcher = s.matcher()
        item_id = _as_uuid(target) or _item_prefix(s, target)
        candidates: list[ItemMatch] = []
        if item_id is None:
            candidates = s.history().find_items(target, project=project)
            if not candidates:
                raise UserError(f"no item's text in {project} (or global), current or past, contains those words", Exit.NOT_FOUND)
            item_id = UUID(candidates[0].item)
        story = s.history().explain(item_id, matcher, project)
    if story is None:
        raise UserError(f"no item {escape(str(item_id))} in {project} (or global)", Exit.NOT_FOUND)
    story = replace(story, candidates=tuple(candidates))
    if json_out:
        emit_json(story.as_dict())
        return
    _print_story(story)
    if len(candidates) > 1:
        console.print("other candidates: " + ", ".join(c.item for c in candidates[1:]), highlight=False, markup=False)


def _print_audit(report: RunAudit) -> None:
    console.print(
        f"consolidation {report.consolidation}: {report.status} ({report.started_at} .. {report.ended_at}); "
        f"model {report.model}, prompt {report.prompt_hash}, tokens {report.input_tokens} in / {report.output_tokens} out",
        highlight=False,
    )
    if report.error:
        console.print(f"  error: {report.error}", highlight=False, markup=False)
    inputs = report.inputs
    console.print(f"  inputs: {len(inputs.selected)} selected; +{len(inputs.added)} ~{len(inputs.changed)} -{len(inputs.removed)}")
    ids = report.agent_ids  # users see the agent's own session ids; the internal ones are in --json
    for name in ("added", "changed", "removed"):
        for session in inputs[name]:
            console.print(f"    {name} {ids.get(session, session)}", highlight=False, markup=False)
    for edit in report.edits:
        console.print(f"  {edit.op} item {edit.item} by {edit.by}: {_with_agent_ids(edit.reason, ids)}", highlight=False, markup=False)
        _print_change(edit.before, edit.after)
    for override in report.overrides:
        subject = f"item {override.item_id}" if override.item_id else override.edit
        console.print(f"  code {override.action} {subject}: {override.reason}", highlight=False, markup=False)
    _print_rounds(report)


def _print_rounds(report: RunAudit) -> None:
    """The planning rounds: rejected edits, refused plans, failed model calls, the repair round, the fallback."""
    for r in report.rounds:
        if r.error:
            line = f"  round {r.round} ({r.model}): no plan: {r.error}"
        elif r.refused:
            line = f"  round {r.round} ({r.model}): plan of {r.proposed} edit(s) refused: {r.reason}"
        else:
            line = f"  round {r.round} ({r.model}): {len(r.rejected)} of {r.proposed} edit(s) rejected"
        console.print(line, highlight=False, markup=False)
        for o in r.rejected:
            console.print(f"    rejected {o.edit}: {o.reason}", highlight=False, markup=False)
    if report.repair:
        console.print(f"  repair round {report.repair.round}: the model got its plan back with {len(report.repair.problems)} reason(s)", highlight=False, markup=False)
    if report.fallback:
        fb = report.fallback
        console.print(f"  fallback: the offline consolidator ({fb.consolidator}) planned this run: {fb.reason}", highlight=False, markup=False)


def audit(
    run: str | None = typer.Argument(None, help="A consolidation id or a unique prefix (default: the latest run)."),
    since: str | None = typer.Option(None, "--since", help="List the runs since DATE or DURATION instead."),
    project: str | None = typer.Option(None, "--project", help="Only this project's (and global) edits and inputs."),
    json_out: bool = JSON,
) -> None:
    """What one consolidation changed, edit by edit, and what code overrode or rejected."""
    from rich.table import Table

    with store() as s:
        history = s.history()
        if since is not None:
            runs = history.runs(parse_since(since, s.clock()))
            if json_out:
                emit_json({"runs": [r.as_dict() for r in runs]})
                return
            table = Table("consolidation", "started", "status", "model", "added", "revised", "retired", "invalidated")
            for r in runs:
                c = r.counts.as_dict() if r.counts else {}
                table.add_row(r.consolidation, r.started_at, r.status, r.model, *(str(c.get(k, "")) for k in ("added", "revised", "retired", "invalidated")))
            console.print(table)
            return
        run_id = options.resolve_id(s.reads(), "runs", run) if run else history.latest_run()
        if run_id is None:
            raise UserError(f"no consolidation {run}" if run else "no consolidation has run yet", Exit.NOT_FOUND)
        report = history.audit(run_id, s.matcher(), project)
    if report is None:
        raise UserError(f"no consolidation {run_id}", Exit.NOT_FOUND)
    if json_out:
        emit_json(report.as_dict())
    else:
        _print_audit(report)


def history(
    as_of_: str | None = typer.Option(None, "--as-of", help="Render memory as it stood at TIME (transaction time)."),
    valid_at: str | None = typer.Option(None, "--valid-at", help="What memory holds to have been true at TIME (valid time)."),
    project: str | None = typer.Option(None, "--project", help="Only this project scope (plus global items)."),
    out: Path | None = typer.Option(None, "--out", help="Write the folder here (else print memory_summary.md)."),
    session: str | None = typer.Option(
        None, "--session", help="What this session (the agent's own id) was served, when, and why each item ranked where it did."
    ),
    json_out: bool = JSON,
) -> None:
    """Memory at a past moment, rebuilt from the log; or what one session was served (--session)."""
    from mnemolog.adapters.folder_writer import FolderWriteError, write_folder
    from mnemolog.adapters.tokens import count_tokens

    if session is not None:
        if as_of_ is not None or valid_at is not None or out is not None:
            raise UserError("--session excludes --as-of, --valid-at and --out", Exit.USAGE)
        _session_history(session.strip(), json_out)
        return
    if (as_of_ is None) == (valid_at is None):
        raise UserError("give exactly one of --as-of TIME, --valid-at TIME or --session ID", Exit.USAGE)
    with store() as s:
        matcher = s.matcher()
        history = s.history()
        if as_of_ is not None:
            at = parse_time(as_of_)
            files = history.folder_as_of(at, matcher, count_tokens, project)
            items = None
        else:
            at = parse_time(valid_at or "")
            found = history.items_valid_at(at, matcher, project)
            items = [{"item": i.item_id, "kind": i.kind, "scope": i.scope, "title": i.title, "text": i.text,
                      "valid_from": i.valid_from} for i in found]
            files = history.folder_valid_at(at, matcher, count_tokens, project)
    if out is not None:
        try:
            write_folder(files, out)
        except FolderWriteError as error:
            raise UserError(str(error)) from error
    if json_out:
        data: dict[str, Any] = {"at": at, "mode": "as_of" if as_of_ else "valid_at", "files": sorted(files), "folder": str(out) if out else None}
        if items is not None:
            data["items"] = items
        else:
            data["memory_summary"] = files.get("memory_summary.md", "")
        emit_json(data)
    elif out is not None:
        console.print(f"wrote {len(files)} files into {out}")
    elif items is not None:
        if not items:
            where = f" in {project} (or global)" if project else ""
            console.print(f"no memory was valid at {at.isoformat()}{where}", highlight=False, markup=False)
        for i in items:
            console.print(f"- {i['text']} [{i['scope']}] (valid from {i['valid_from']}) [item:{i['item']}]", highlight=False, markup=False)
    else:
        console.print(files.get("memory_summary.md", ""), highlight=False, markup=False)


def _session_history(session: str, json_out: bool) -> None:
    from mnemolog.domain.services.injections import session_history

    with store() as s:
        told = session_history(s.reads(), s.matcher(), session)
    if json_out:
        emit_json(told.as_dict())
        return
    if not told.servings:
        raise UserError(f"no memory was served to session {session} (or it never gave its id)", Exit.NOT_FOUND)
    data = told.as_dict()
    console.print(
        f"session {session}: served {len(told.servings)} time(s), {data['tokens']} tokens in all; cited {len(told.cited)} item(s)",
        highlight=False, markup=False,
    )
    for serving in told.servings:
        console.print(
            f"  {serving['at']}  {serving['surface']}  {serving['project']}  {serving['tokens']} tokens, {len(serving['items'])} item(s)"
            + (f", {len(serving['excerpts'])} excerpt(s)" if serving["excerpts"] else ""),
            highlight=False, markup=False,
        )
        for item in serving["items"]:
            title = _served_label(item)
            cited = "  [cited]" if item["cited"] else ""
            console.print(f"    {item['rank']:>3}. {item['item_id']}  {title}: {item['why']}{cited}", highlight=False, markup=False)
        for reference in serving["excerpts"]:
            console.print(f"         {reference}", highlight=False, markup=False)


def _served_label(item: dict[str, Any]) -> str:
    """How ``history --session`` names a served item: its title, else the start of its text."""
    from mnemolog.domain.context_lines import one_line

    if item["title"] is None:
        return "(no longer readable)"
    if item["title"].strip():
        return str(item["title"])
    text = one_line(item.get("text") or "")
    return text if len(text) <= 80 else text[:79] + "…"


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(explain)
    app.command()(audit)
    app.command()(history)
