"""`mnemolog list items|sessions|notes|tombstones|runs`: what memory holds, with filters, short ids and --json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from mnemolog.cli import options
from mnemolog.cli.command_store import store
from mnemolog.cli.output import Exit, UserError, console, emit_json

WHATS = ("items", "sessions", "notes", "tombstones", "runs")
SHORT = 8  # characters of an id printed; any unique prefix is accepted back


def _short(value: Any) -> str:
    return str(value)[:SHORT]


def _day(value: Any) -> str:
    return value.isoformat()[:16].replace("T", " ") if value else "-"


def _cut(text: str, width: int = 90) -> str:
    line = " ".join(text.replace("[item:", "(item:").split())
    return line if len(line) <= width else line[: width - 1] + "…"


def list_(
    what: str = typer.Argument(..., metavar="WHAT", help="items, sessions, notes, tombstones or runs."),
    text: str | None = typer.Argument(None, metavar="TEXT", help="Only those whose text contains this (items, notes: text; sessions: cwd or id; tombstones: reason; runs: model or error)."),
    cwd: Path | None = options.CWD,
    project_key: str | None = options.PROJECT,
    all_: bool = typer.Option(False, "--all", help="Every project (default: this project's and the user-wide ones)."),
    kind: str | None = typer.Option(None, "--kind", help="Items: preference, knowledge, failure, task, skill. Notes: remember, correct. Sessions: the agent (codex, claude-code)."),
    trust: str | None = typer.Option(None, "--trust", help="Items: proposed, accepted, doubted, rejected."),
    status: str | None = typer.Option(
        None, "--status",
        help="Items: active, retired, invalidated. Sessions: extracted, nothing, failed, waiting, ineligible, excluded. "
        "Notes: pending, applied, withdrawn. Tombstones: active, lifted. Runs: running, completed, failed.",
    ),
    limit: int = typer.Option(200, "--limit", min=1, max=10_000, help="At most N rows."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List items, sessions, notes, tombstones or consolidation runs, with filters and short ids."""
    from mnemolog.domain.services import listing
    from mnemolog.domain.services.read import item_dict

    if what not in WHATS:
        raise UserError(f"list what? {what!r} (expected one of {', '.join(WHATS)})", Exit.USAGE)
    if trust is not None and what != "items":
        raise UserError("--trust filters items only", Exit.USAGE)
    if kind is not None and what in ("tombstones", "runs"):
        raise UserError(f"--kind does not filter {what}", Exit.USAGE)
    if all_ and (cwd is not None or project_key is not None):
        raise UserError("--all excludes --cwd and --project", Exit.USAGE)
    project = None if all_ else options.project_of(cwd, project_key)
    rows: list[dict[str, Any]]
    lines: list[str]
    try:
        with store() as s:
            reads = s.reads()
            if what == "items":
                found = listing.list_items(reads, s.matcher(), project, kind=kind, trust=trust, status=status, text=text, limit=limit)
                rows = [item_dict(i) for i in found]
                lines = [
                    f"{_short(i.item_id)}  {i.kind:<10} {i.trust:<8} {i.status:<11} {'pinned ' if i.pinned else ''}{i.scope}  "
                    f"{_cut(f'{i.title}: {i.text}' if i.title else i.text) or '(retired: no text)'}"
                    for i in found
                ]
            elif what == "sessions":
                sessions = listing.list_sessions(
                    reads, s.clock(), s.ports.eligibility(), project, agent=kind, status=status, text=text, limit=limit
                )
                rows = [x.as_dict() for x in sessions]
                lines = []
                for x in sessions:
                    why = f"  until {_day(x.until)}" if x.until else ""
                    why += f"  {x.session.last_error}" if x.state == "failed" and x.session.last_error else ""
                    why += f"  ({', '.join(x.reasons)})" if x.state in ("ineligible", "excluded") else ""
                    lines.append(f"{_short(x.session.native_id)}  {x.session.source:<11} {x.state:<10} {_day(x.session.updated_at)}  {x.session.scope}{why}")
            elif what == "notes":
                notes = listing.list_notes(reads, project, intent=kind, status=status, text=text)[:limit]
                rows = [
                    {"id": str(n.note_id), "intent": n.intent, "scope": n.scope, "state": n.state, "source": n.source,
                     "written_at": n.written_at, "applied_by": str(n.applied_by) if n.applied_by else None, "text": n.text}
                    for n in notes
                ]
                lines = [f"{_short(n.note_id)}  {n.intent:<8} {n.state:<9} {n.scope}  {_cut(n.text)}" for n in notes]
            elif what == "tombstones":
                tombs = listing.list_tombstones(reads, project, status=status, text=text)[:limit]
                rows = [
                    {"id": str(t.tombstone_id), "scope": t.scope, "reason": t.reason, "placed_at": t.placed_at,
                     "state": "lifted" if t.lifted else "active", "suppressions": t.suppressions}
                    for t in tombs
                ]
                lines = [
                    f"{_short(t.tombstone_id)}  {'lifted' if t.lifted else 'active':<7} {_day(t.placed_at)}  {t.scope}  "
                    f"{t.suppressions} suppression(s)  {_cut(t.reason, 60)}"
                    for t in tombs
                ]
            else:
                runs = listing.list_runs(reads, status=status, text=text, limit=limit)
                rows = [
                    {"id": str(r.run_id), "status": r.status, "started_at": r.started_at, "ended_at": r.ended_at, "model": r.model,
                     "added": r.added, "revised": r.revised, "retired": r.retired, "invalidated": r.invalidated, "error": r.error}
                    for r in runs
                ]
                lines = [
                    f"{_short(r.run_id)}  {r.status:<9} {_day(r.started_at)}  {r.model}  "
                    + (f"+{r.added} ~{r.revised} -{r.retired} invalidated {r.invalidated}" if r.status == "completed" else _cut(r.error or "", 80))
                    for r in runs
                ]
    except listing.BadFilter as error:
        raise UserError(str(error), Exit.USAGE) from error
    if json_out:
        emit_json({"what": what, "project": project, what: rows})
        return
    if not lines:
        if what == "runs":
            where = ""
        elif project is None:
            where = " in any project"
        else:
            where = f" in {project}" + (" (or global)" if what != "sessions" else "")
        console.print(f"no {what}{where} match", highlight=False, markup=False)
        return
    for line in lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command("list")(list_)
