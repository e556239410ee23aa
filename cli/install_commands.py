"""``mnemolog install codex|claude-code``: hooks and the MCP server in the agent's own config, and back out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from mnemolog.cli.output import Exit, UserError, console, emit_json, errors


def install(
    agent: str = typer.Argument(..., help="codex or claude-code."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff; change nothing."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Take mnemolog out again: restore the files as they were."),
    codex: Path | None = typer.Option(None, "--codex", help="The codex binary that trusts the hooks (default: codex on PATH)."),
    no_trust: bool = typer.Option(False, "--no-trust", help="Codex: do not ask Codex to trust the hooks (trust them with /hooks yourself)."),
    json_out: bool = typer.Option(False, "--json", help="Print what was (or would be) changed as JSON."),
) -> None:
    """Connect an agent to mnemolog: SessionStart/SessionEnd hooks and the MCP server, with absolute paths, backups and a diff."""
    from mnemolog.adapters.agent_install import AGENTS, Target

    if agent not in AGENTS:
        raise UserError(f"unknown agent {agent!r} (expected one of {', '.join(AGENTS)})", Exit.USAGE)
    target = Target.for_agent(agent)
    report = _uninstall(target, dry_run) if uninstall else _install(target, dry_run, codex, no_trust)
    if json_out:
        emit_json(report)
        return
    for change in report["files"]:
        if change["diff"]:
            console.print(change["diff"], end="", markup=False, highlight=False, soft_wrap=True)
    _print_summary(report)


def _manifest(agent: str) -> Any:
    from mnemolog.adapters.agent_config_files import Manifest
    from mnemolog.adapters.settings import resolve_home

    return Manifest.load(resolve_home() / "installs" / agent)


def _install(target: Any, dry_run: bool, codex: Path | None, no_trust: bool) -> dict[str, Any]:
    from mnemolog.adapters.agent_config_files import apply
    from mnemolog.adapters.agent_install import install_edits

    try:
        edits = install_edits(target)
    except ValueError as error:  # a config file that does not parse: say which, change nothing
        raise UserError(f"cannot read {target.agent}'s config: {error}") from error
    manifest = _manifest(target.agent)
    report: dict[str, Any] = {
        "agent": target.agent,
        "action": "install",
        "dry_run": dry_run,
        "mnemolog": str(target.mnemolog),
        "files": [{"path": str(e.path), "changed": e.changes, "diff": e.diff()} for e in edits],
        "backups": str(manifest.folder),
        "trusted_hooks": [],
        "trust": None,
    }
    if not dry_run:
        apply(edits, manifest)
    if target.agent == "codex":
        report["trust"] = _trust_codex_hooks(target, manifest, codex, no_trust, dry_run)
        report["trusted_hooks"] = list(manifest.extra.get("trusted_keys", []))
        report["warning"] = _codex_folder_warning(target)
    if not dry_run and (manifest.files or manifest.extra):
        manifest.save()
    return report


def _trust_codex_hooks(target: Any, manifest: Any, codex: Path | None, no_trust: bool, dry_run: bool) -> str:
    import shutil

    from mnemolog.adapters import hook_json
    from mnemolog.adapters.codex_app_server import CodexAppServerError, trust_hooks

    how = "start codex, type /hooks and trust mnemolog's SessionStart and SessionEnd hooks"
    if no_trust:
        return f"not asked (--no-trust): {how}"
    binary = codex or (Path(found) if (found := shutil.which("codex")) else None)
    if binary is None:
        return f"codex is not on PATH: {how} (or run install again with --codex PATH)"
    if dry_run:
        return f"would ask {binary} to trust mnemolog's hooks"
    try:
        keys = trust_hooks(binary, target.home, Path.cwd(), hook_json.is_ours)
    except CodexAppServerError as error:
        return f"Codex did not trust the hooks ({error}): {how}"
    manifest.extra["trusted_keys"] = sorted(set(manifest.extra.get("trusted_keys", [])) | set(keys))
    return f"trusted by {binary} ({len(keys)} hooks)" if keys else f"Codex did not list mnemolog's hooks: {how}"


def _codex_folder_warning(target: Any) -> str | None:
    from mnemolog.adapters.settings import load_settings

    folder = load_settings().folder.expanduser().absolute()
    if folder == (target.home / "memories").absolute():
        return (
            f"memory_dir is Codex's own memory folder ({folder}): `run` and `render` would replace Codex's files there. "
            "Unset memory_dir; the hooks give Codex its project's memory without it"
        )
    return None


def _uninstall(target: Any, dry_run: bool) -> dict[str, Any]:
    from mnemolog.adapters.agent_config_files import undo_edit, write_atomically
    from mnemolog.adapters.agent_install import same_content, strip_ours

    manifest = _manifest(target.agent)
    if not manifest.exists:
        raise UserError(f"mnemolog is not installed for {target.agent} (no record in {manifest.folder})", Exit.NOT_FOUND)
    keys = list(manifest.extra.get("trusted_keys", []))
    changes = []
    for name in manifest.files:
        path = Path(name)

        def strip(data: bytes, path: Path = path) -> bytes | None:
            return strip_ours(target, path, data, keys)

        def same(a: bytes | None, b: bytes | None, path: Path = path) -> bool:
            return same_content(path, a, b)

        changes.append(undo_edit(path, manifest, strip, same))
    if not dry_run:
        for edit, _ in changes:
            if edit.changes:
                write_atomically(edit.path, edit.after)
        manifest.remove()
    return {
        "agent": target.agent,
        "action": "uninstall",
        "dry_run": dry_run,
        "files": [
            {"path": str(e.path), "changed": e.changes, "diff": e.diff(), "restored_original": restored}
            for e, restored in changes
        ],
        "backups": str(manifest.folder),
    }


def _print_summary(report: dict[str, Any]) -> None:
    verb = "would change" if report["dry_run"] else "changed"
    changed = [f["path"] for f in report["files"] if f["changed"]]
    if report["action"] == "install":
        if changed:
            kept = "would keep the originals" if report["dry_run"] else "originals kept"
            console.print(f"{report['agent']}: {verb} {', '.join(changed)} ({kept} in {report['backups']})", highlight=False, markup=False)
        else:
            console.print(f"{report['agent']}: already installed; nothing to change", highlight=False, markup=False)
        if report.get("trust"):
            console.print(f"hooks: {report['trust']}", highlight=False, markup=False)
        if report.get("warning"):
            errors.print(f"warning: {report['warning']}", highlight=False, markup=False)
        if not report["dry_run"]:
            console.print(f"hooks and MCP server run {report['mnemolog']}", highlight=False, markup=False)
        return
    for change in report["files"]:
        how = "restored byte for byte" if change["restored_original"] else "mnemolog's entries taken out; later changes kept"
        console.print(f"{change['path']}: {how}{' (dry run)' if report['dry_run'] else ''}", highlight=False, markup=False)
    if not report["files"]:
        errors.print("nothing was recorded as installed", highlight=False)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(install)
