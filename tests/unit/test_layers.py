"""Folders are layers: the domain imports no infrastructure, projections no adapters."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "domain": ("psycopg", "openai", "typer", "rich", "sqlite3", "mnemolog.adapters", "mnemolog.projections", "mnemolog.cli"),
    "projections": ("openai", "typer", "rich", "mnemolog.adapters", "mnemolog.cli", "mnemolog.domain.services"),  # views use rules, not use cases
    "adapters": ("typer", "mnemolog.cli"),
}


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_what_it_may(layer: str) -> None:
    offenders = []
    for path in sorted((ROOT / layer).glob("**/*.py")):
        for name in imports_of(path):
            if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer]):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, "\n".join(offenders)


def test_the_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import psycopg\nfrom openai import OpenAI\n")
    assert {"psycopg", "openai"} <= imports_of(bad)


SQL = re.compile(r"\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE)\b|mnemolog_view_|\btable\(")
SQL_ALLOWED = {
    "adapters/tombstone_keys.py",  # the tombstone key in the PostgreSQL database's own settings table
    "adapters/store.py",  # the advisory lock taken while a PostgreSQL store creates its tables
    "adapters/batch_recorders.py",  # the event store's batched recorders (many events per statement)
    "adapters/batch_postgres_recorder.py",
    "adapters/data_keys.py",  # the data keys, kept outside the log and the views (crypto-shredding)
}


def sources(*layers: str) -> list[Path]:
    return [p for layer in layers for p in sorted((ROOT / layer).glob("**/*.py"))]


def test_no_sql_or_view_table_outside_projections() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources("domain", "adapters", "cli")
        if str(path.relative_to(ROOT)) not in SQL_ALLOWED
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if SQL.search(line) and not line.lstrip().startswith(("#", '"""'))
    ]
    assert not offenders, "\n".join(offenders)


def test_catch_ups_outside_projections_are_few_and_explained() -> None:
    calls = [
        (path, n, line)
        for path in sources("domain", "adapters", "cli")
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if "catch_up()" in line and "def catch_up" not in line
    ]
    assert not [c for c in calls if "/domain/" in str(c[0])], "services wait through uow.reads(), never catch up"
    assert len(calls) <= 5, calls
    unexplained = [f"{p.relative_to(ROOT)}:{n}" for p, n, line in calls if "#" not in line]
    assert not unexplained, f"each catch-up outside projections says why in a comment: {unexplained}"


OS_MECHANICS = re.compile(r"\bos\.(kill|getpid|environ)|/proc\b|\bimport (signal|socket)\b|\bsocket\.")


def lines_matching(pattern: re.Pattern[str], *layers: str, leave_out: str = "") -> list[str]:
    """``file:line: text`` of every code line of ``layers`` that ``pattern`` finds (comments aside; ``leave_out``: a file name)."""
    return [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources(*layers)
        if not leave_out or path.name != leave_out
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line) and not line.lstrip().startswith("#")
    ]


def test_the_domain_leaves_processes_and_signals_to_adapters() -> None:
    """Process liveness and kill hooks are ports (``Workers``, ``fault_points.install``), implemented in adapters."""
    offenders = lines_matching(OS_MECHANICS, "domain")
    assert not offenders, "\n".join(offenders)


PORT_BUILDERS = re.compile(
    r"\b(redactor|session_source|scope_lookup|eligibility_policy|claim_policy|make_extractor|make_consolidator|"
    r"fallback_consolidator|extract_workers|NoteFolder|CachedTokenizer|SecretRedactor|SessionFiles|ReadLimits|GitScopes|"
    r"disk_folder_reader|read_session)\(|\bConsolidationPolicy\.window\("
)


def test_no_entrypoint_builds_a_port_by_hand() -> None:
    """Entrypoints ask the composition root (``Store.ports``, ``adapters.composition``) for every port and policy."""
    offenders = lines_matching(PORT_BUILDERS, "cli")
    assert not offenders, "\n".join(offenders)


def test_no_entrypoint_follows_the_log_by_hand() -> None:
    """The store session brings the folder and skills in step (``adapters.store_session``): no entrypoint re-renders or syncs."""
    followers = re.compile(r"\b(follow_log|follow_skills|follow_store|followers\.follow|settle)\(")
    # The long-lived MCP server settles after each write tool: it is its own store session.
    offenders = lines_matching(followers, "cli", leave_out="mcp_server.py")
    assert not offenders, "\n".join(offenders)

# The store's log and views themselves (``Store.app``, ``Store.view``): entrypoints read through ports
# (``reads()``, ``history()``, ``log_position()``); Starlette's ``request.app`` and an ASGI middleware's
# ``self.app`` are other objects of the same name.
NOT_A_STORE = {"request", "self"}


def store_internals_used(path: Path) -> list[str]:
    """``x.app`` / ``x.view`` in ``path`` where ``x`` is not a request or the middleware itself, as ``file:line: x.attr``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("app", "view")
        and not (isinstance(node.value, ast.Name) and node.value.id in NOT_A_STORE)
    ]
    return [f"{path.name}:{node.lineno}: {ast.unparse(node)}" for node in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


def test_entrypoints_never_reach_into_the_store() -> None:
    offenders = [found for path in sources("cli") for found in store_internals_used(path)]
    assert not offenders, "read through s.reads() / s.history() / s.log_position(), not the log or views:\n" + "\n".join(offenders)


def test_the_check_catches_a_reach_into_the_store(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("with store() as s:\n    n = s.app.max_notification_id()\n    story = explain(opened.app, 1)\n    p = s.view.position('x')\n"
                   "state = request.app.state\n")
    assert [line.split(": ", 1)[1] for line in store_internals_used(bad)] == ["s.app", "opened.app", "s.view"]
