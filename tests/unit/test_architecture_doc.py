"""docs/architecture.md names code: every module, function, class and method it cites in backticks exists.

A name is checked as the doc writes it: ``module.name`` (the module is a file
of one of the layers, the name defined in it, a method of a class in it, or a
module of that name in a package), a file path, or a lone identifier (defined
somewhere in the layers). Words in backticks that are not code (commands,
options, file names the folder holds) are left alone.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
LAYERS = ("domain", "projections", "adapters", "cli", "prompts")
SPAN = re.compile(r"`([^`\n]+)`")
HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@cache
def modules() -> dict[str, list[Path]]:
    """Every Python module of the layers by its stem, and every package by its folder name."""
    found: dict[str, list[Path]] = {}
    for layer in LAYERS:
        for path in (ROOT / layer).glob("**/*.py"):
            found.setdefault(path.stem, []).append(path)
            if path.name == "__init__.py":
                found.setdefault(path.parent.name, []).append(path)
    return found


@cache
def defined(path: Path) -> frozenset[str]:
    """The names a module defines at any depth (functions, classes, methods, assignments, attributes of self)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return frozenset(names)


@cache
def quoted(path: Path) -> frozenset[str]:
    """The words of a module's string literals, docstrings left out: view and table names, JSON keys, event names."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return frozenset(
        word
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", node.value)
    )


@cache
def everywhere() -> frozenset[str]:
    """Every name the layers define or quote, and every module and package name."""
    paths = [path for found in modules().values() for path in found]
    macros = {m for page in (ROOT / "cli" / "web" / "templates").glob("*.html") for m in re.findall(r"{%-? *macro (\w+)", page.read_text())}
    return frozenset({name for path in paths for name in defined(path) | quoted(path)} | set(modules()) | macros)


THIRD_PARTY = {
    "model_dump", "model_dump_json", "model_validate_json", "model_copy", "chat.completions.create", "McpToolCall",
    "select_notifications",  # the event store's recorder
}
OBJECTS = {"app", "store", "uow", "s", "reads", "source", "session", "item", "events", "ports", "plan", "policy", "macros", "display"}


def looks_like_code(name: str) -> bool:
    """snake_case with an underscore, CamelCase, or a dotted name: what the doc writes for code."""
    return "." in name or "_" in name.strip("_") or bool(re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", name))


def problem(span: str) -> str | None:
    """Why a backticked span names no code that exists (None: it does, or it is not code)."""
    text = span.strip()
    if text.startswith(("-", "$", "<", "[", "mnemolog ", "python ", "git ", "claude ", "codex ")) or " " in text.split("(")[0].strip():
        return None
    dotted_path = re.fullmatch(r"((?:domain|projections|adapters|cli|prompts)/[\w/]+)\.([A-Za-z_]\w*)(?:\(.*)?", text)
    if dotted_path and not (ROOT / f"{dotted_path.group(1)}.{dotted_path.group(2)}").exists():
        module = ROOT / f"{dotted_path.group(1)}.py"
        if not module.exists():
            return f"no module {dotted_path.group(1)}.py"
        return None if dotted_path.group(2) in defined(module) else f"{text}: {module.name} defines no {dotted_path.group(2)}"
    path_like = re.fullmatch(r"[\w./*<>-]+\.(py|md|toml|txt|html|css|sqlite|json|jsonl|key|lock|zst)", text) or re.fullmatch(
        r"(domain|projections|adapters|cli|prompts|tests)/[\w./-]*", text
    )
    if path_like:
        if not text.startswith(("domain/", "projections/", "adapters/", "cli/", "prompts/", "tests/", "docs/")):
            return None  # a file the folder, the home or an agent holds (MEMORY.md), not a path in the repository
        return None if (ROOT / text.rstrip("/")).exists() else f"no file {text}"
    head = HEAD.match(text)
    if head is None or (head.end() < len(text) and text[head.end()] not in "(:[ ,"):
        return None
    name = head.group(0)
    if not looks_like_code(name) or name in THIRD_PARTY or name.split(".")[-1] in THIRD_PARTY or re.fullmatch(r"[A-Z0-9_]+", name):
        return None  # not code, another library's, or an environment variable
    parts = name.split(".")
    if parts[0] in ("mnemolog",):
        parts = parts[1:]
    if len(parts) == 1:
        return None if parts[0] in everywhere() else f"{name}: defined nowhere"
    for start in range(len(parts) - 1):
        mod = parts[start]
        if mod in modules():
            rest = parts[start + 1 :]
            for path in modules()[mod]:
                if rest[0] in defined(path) or (rest[0] in modules() and path.name == "__init__.py"):
                    return None
            if mod in OBJECTS:
                break  # an object the doc names by its usual variable (``app.save_all``): its attribute must exist somewhere
            return f"{name}: {mod} defines no {rest[0]}"
    return None if parts[-1] in everywhere() else f"{name}: defined nowhere"


def test_every_name_the_architecture_doc_cites_exists() -> None:
    problems = sorted({p for span in SPAN.findall(DOC.read_text()) if (p := problem(span))})
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_name_that_is_gone() -> None:
    assert problem("domain.services.forget.forget_value") is None
    assert problem("plan_checks.screen_plan") is None
    assert problem("plan_checks.check_plan_that_never_was") is not None
    assert problem("a_function_nobody_wrote") is not None
    assert problem("domain/services/no_such_module.py") is not None
    assert problem("--dry-run") is None and problem("MEMORY.md") is None
    assert problem("cli/forget_commands.forget") is None
    assert problem("cli/forget_commands.forget_nothing") is not None
