"""Projects: each project and the user-wide scope, with coverage and a chart of items and sessions over time."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mnemolog.cli.web.charts import Chart, growth_chart
from mnemolog.cli.web.rendering import opened, page
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

GLOBAL = "global"
EVERY_ITEM = 100_000  # the page counts every item of a scope, whatever its status


@dataclass
class ProjectRow:
    """One scope as the Projects page shows it."""

    scope: str
    statuses: Counter[str] = field(default_factory=Counter)
    trusts: Counter[str] = field(default_factory=Counter)
    sessions: int = 0
    coverage: list[dict[str, Any]] = field(default_factory=list)  # one per agent
    chart: Chart | None = None


def known_scopes(reads: Any) -> list[str]:
    """Every scope the views know (items' and sessions'), the user-wide one first."""
    scopes = {i.scope for i in reads.list_items(None, limit=EVERY_ITEM)} | {s.scope for s in reads.session_states()}
    return [GLOBAL, *sorted(scopes - {GLOBAL, ""})]


def projects(request: Request) -> Response:
    """GET /: every scope with its items by status and trust, its sessions' coverage and a growth chart."""
    from mnemolog.domain.services import listing
    from mnemolog.domain.services.status import coverage_report

    with opened(request) as s:
        reads = s.reads()
        items = listing.list_items(reads, s.matcher(), None, limit=EVERY_ITEM)
        sessions = reads.session_states()
        report = coverage_report(s, s.ports.eligibility())
    rows = {scope: ProjectRow(scope) for scope in [GLOBAL, *sorted({i.scope for i in items} | {x.scope for x in sessions} - {GLOBAL, ""})]}
    for item in items:
        rows[item.scope].statuses[item.status] += 1
        if item.status == "active":
            rows[item.scope].trusts[item.trust] += 1
    for session in sessions:
        if session.scope in rows:
            rows[session.scope].sessions += 1
    for group in report.groups:
        if group.project in rows:
            rows[group.project].coverage.append(group.as_dict())
    for row in rows.values():
        row.chart = growth_chart({
            "items": [i.created_at for i in items if i.scope == row.scope],
            "sessions": [x.updated_at for x in sessions if x.scope == row.scope],
        })
    return page(request, "projects.html", title="Projects", rows=list(rows.values()), total=report.total.as_dict())


def routes() -> list[Route]:
    """The routes of this page."""
    return [Route("/", projects, methods=["GET"])]
