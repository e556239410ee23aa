"""Folders are layers: the domain imports no infrastructure, projections no adapters."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FORBIDDEN = {
    "domain": ("psycopg", "openai", "typer", "rich", "sqlite3", "mnemolog.adapters", "mnemolog.projections", "mnemolog.cli"),
    "projections": ("openai", "typer", "rich", "mnemolog.adapters", "mnemolog.cli"),
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
