"""The ``search`` command's work, and its start without typer.

The served instructions tell agents to run ``mnemolog search``, so its start
is waited for at every call: a plain command line is read by
``search_arguments`` (``cli/plain_arguments.py``), anything else goes to
typer (``cli/app.py: main``), which prints the same usage error or help as
always. Both ways end in ``search`` below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemolog.cli.command_store import project_of, store
from mnemolog.cli.output import Exit, UserError, console, emit_json, errors

MAX_LIMIT = 200


def search_arguments(args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of ``search`` as typer would give them; None for anything typer must answer."""
    from mnemolog.cli.plain_arguments import plain_arguments

    given = plain_arguments(
        args, "search", {"--json": "json_out"},
        {"--cwd": "cwd", "--project": "project_key", "--kind": "kind", "--only": "only", "--limit": "limit"},
        {"cwd": None, "project_key": None, "kind": None, "only": None, "limit": "10", "json_out": False},
        positional="query", numbers=("limit",), paths=("cwd",),
    )
    if given is None or not 1 <= given["limit"] <= MAX_LIMIT:
        return None  # typer's range error
    return given


def validity(data: dict[str, Any]) -> str:
    """An item's valid time in words: "valid since 2026-10-01", "valid 2026-10-01 to 2026-11-02"."""
    start = (data["valid_from"] or data.get("created_at") or "")[:10]
    end = (data["valid_to"] or "")[:10]
    if start and end:
        return f"valid {start} to {end}"
    if start:
        return f"valid since {start}"
    return f"valid until {end}" if end else "valid (no valid time recorded)"


def search(query: str, cwd: Path | None, project_key: str | None, kind: str | None, only: str | None, limit: int, json_out: bool) -> None:
    """Search memory and the history behind it, printed (see ``memory_commands.search`` for the options)."""
    from mnemolog.domain.context_lines import one_line
    from mnemolog.domain.item_kinds import ItemKindName
    from mnemolog.domain.services.recall import recall, recall_hit_dict

    kinds = [k.value for k in ItemKindName]
    if kind is not None and kind not in kinds:
        raise UserError(f"unknown kind {kind!r} (expected one of {', '.join(kinds)})", Exit.USAGE)
    if only is not None and only not in ("items", "history"):
        raise UserError(f"unknown --only {only!r} (expected items or history)", Exit.USAGE)
    project = project_of(cwd, project_key)
    with store() as s:
        found = recall(s.reads(), s.recall(), s.matcher(), query, project, only=only, kind=kind, limit=limit)  # type: ignore[arg-type]
    hits = [recall_hit_dict(h) for h in found.hits]
    if json_out:
        emit_json({"project": project, "query": query, "lexical_only": found.lexical_only or None, "hits": hits})
        return
    if found.lexical_only:
        errors.print(found.lexical_only, highlight=False, markup=False)
    if not hits:
        console.print(f"no memory or history matches {query!r} in {project} (or global)", highlight=False, markup=False)
        return
    for hit in hits:
        if hit["type"] == "excerpt":
            first, last = hit["lines"]
            lines = f":{first}-{last}" if first is not None else ""
            date = (hit["date"] or "")[:10]
            console.print(f"{hit['ref']}  history  {hit['agent']}  {date}  {hit['path']}{lines}", highlight=False, markup=False)
            console.print(f"    {one_line(hit['text'])[:300]}", highlight=False, markup=False, soft_wrap=True)
            continue
        used = f", used {hit['use_count']}x" if hit["use_count"] else ""
        console.print(
            f"[item:{hit['id']}]  {hit['kind']}  {hit['trust']}  {validity(hit)}  {hit['scope']}{used}",
            highlight=False, markup=False,
        )
        body = one_line(f"{hit['title']}: {hit['text']}" if hit["title"] else hit["text"])
        console.print(f"    {body[:300]}", highlight=False, markup=False, soft_wrap=True)
