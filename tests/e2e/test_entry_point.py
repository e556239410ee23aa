"""The installed ``mnemolog`` script: what it imports, and that tests may run it in process.

A command imports only what it needs, so start-up time is paid for what is
used: each command runs in a fresh interpreter with ``-X importtime``, which
lists every module imported (no timing is asserted; see
tests/benchmarks/test_startup_benchmark.py for the times). And the in-process
runner most CLI tests use prints and exits exactly as the script does.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import MNEMOLOG, run_cli, spawn_cli

# Modules a command must not pay for unless it uses them.
POSTGRES = ("psycopg", "psycopg_pool", "eventsourcing.postgres")
MODEL_CLIENT = ("openai",)
TOKENIZER = ("bpe_openai",)
MCP = ("mcp",)


def imported_modules(*args: str, home: Path) -> set[str]:
    """The modules ``mnemolog ARGS`` imports (on SQLite, offline, no API key)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MNEMOLOG_", "OPENAI_"))}
    env.update(MNEMOLOG_HOME=str(home / "data"), HOME=str(home), CODEX_HOME=str(home / "codex"), NO_COLOR="1")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", MNEMOLOG, *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    } - {"package"}


def loaded(modules: set[str], *names: str) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_help_imports_no_command(tmp_path: Path) -> None:
    modules = imported_modules("--help", home=tmp_path)
    heavy = (*POSTGRES, *MODEL_CLIENT, *TOKENIZER, *MCP, "rich", "pydantic", "eventsourcing")
    assert loaded(modules, *heavy) == []
    assert loaded(modules, "mnemolog.domain", "mnemolog.adapters", "mnemolog.projections") == []


def test_what_command_modules_import_at_top_level_is_cheap() -> None:
    # The rule for cli/*_commands.py: at top level only the standard library,
    # typer and these modules; services, adapters, projections, the domain and
    # rich are imported inside the command functions (so `mnemolog X --help`
    # and the other commands of a module do not pay for them).
    shared = ("mnemolog.cli.output", "mnemolog.cli.options", "mnemolog.cli.command_store")
    code = f"import sys, {', '.join(shared)}; print('\\n'.join(sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(done.stdout.split())
    assert set(shared) <= modules
    assert loaded(modules, "rich", "pydantic", "eventsourcing", "mnemolog.domain", "mnemolog.adapters", "mnemolog.projections") == []


@pytest.mark.parametrize(
    ("args", "unused"),
    [
        (("doctor", "--json"), (*POSTGRES, *MODEL_CLIENT, *TOKENIZER, *MCP)),
        (("search", "anything", "--json"), (*POSTGRES, *MODEL_CLIENT, *TOKENIZER, *MCP)),
        (("run", "--all", "--json"), (*POSTGRES, *MODEL_CLIENT, *MCP)),  # offline: no model client
    ],
    ids=["doctor", "search", "run-offline"],
)
def test_a_sqlite_command_imports_no_postgres_model_client_or_mcp(tmp_path: Path, args: tuple[str, ...], unused: tuple[str, ...]) -> None:
    modules = imported_modules(*args, home=tmp_path)
    assert "mnemolog.cli.app" in modules  # the listing is real
    assert loaded(modules, *unused) == []


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("doctor", "--bogus"),  # a usage error (click): exit 2
        ("review", "not-an-id", "--accept"),  # a user error: one line, exit 2
        ("show", "00000000-0000-4000-8000-000000000000"),  # not found: exit 5
        ("doctor", "--json"),
    ],
    ids=["help", "usage-error", "user-error", "not-found", "doctor"],
)
def test_the_in_process_runner_prints_and_exits_as_the_script_does(tmp_path: Path, args: tuple[str, ...]) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)}
    script, in_process = spawn_cli(*args, env=env, cwd=tmp_path), run_cli(*args, env=env, cwd=tmp_path)
    assert (in_process.code, in_process.out, in_process.err) == (script.code, script.out, script.err)
    assert "Traceback" not in script.err
