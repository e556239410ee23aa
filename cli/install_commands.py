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
    no_skills: bool = typer.Option(False, "--no-skills", help="Do not put mnemolog's user-wide skills into the agent's skill folder (~/.claude/skills, $CODEX_HOME/skills)."),
    project_skills_in_repo: bool = typer.Option(
        False, "--project-skills-in-repo",
        help="Claude Code: also write each project's skills into <repo>/.claude/skills (at the start of a session there), as real skills of that repository.",
    ),
    no_prompt_recall: bool = typer.Option(
        False, "--no-prompt-recall", help="Do not add the UserPromptSubmit hook (recall bearing on each prompt, within prompt_recall_tokens).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print what was (or would be) changed as JSON."),
) -> None:
    """Connect an agent to mnemolog: SessionStart/UserPromptSubmit/SessionEnd hooks and the MCP server, with absolute paths, backups and a diff.

    Both also get mnemolog's user-wide skills in their user skill folder (~/.claude/skills, $CODEX_HOME/skills); a
    project's skills reach only that project's sessions (in the SessionStart context; Claude Code with
    --project-skills-in-repo also in <repo>/.claude/skills).
    """
    from mnemolog.adapters.agent_install import AGENTS, Target

    if agent not in AGENTS:
        raise UserError(f"unknown agent {agent!r} (expected one of {', '.join(AGENTS)})", Exit.USAGE)
    if agent != "claude-code" and project_skills_in_repo:
        raise UserError("--project-skills-in-repo is for claude-code (Codex gets a project's skills in its SessionStart context)", Exit.USAGE)
    target = Target.for_agent(agent)
    if no_prompt_recall:
        from dataclasses import replace

        target = replace(target, prompt_recall=False)
    if uninstall:
        report = _uninstall(target, dry_run)
    else:
        report = _install(target, dry_run, codex, no_trust)
        if not no_skills:
            report["skills"] = _install_skills(target, dry_run, project_skills_in_repo)
    if json_out:
        emit_json(report)
        return
    for change in report["files"]:
        if change["diff"]:
            console.print(change["diff"], end="", markup=False, highlight=False, soft_wrap=True)
    for sync in report.get("skill_folders", []):
        if sync["diff"]:
            console.print(sync["diff"], end="", markup=False, highlight=False, soft_wrap=True)
    if report.get("skills") and report["skills"]["diff"]:
        console.print(report["skills"]["diff"], end="", markup=False, highlight=False, soft_wrap=True)
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


def _install_skills(target: Any, dry_run: bool, in_repo: bool) -> dict[str, Any]:
    """The user-wide skills into the agent's user skill folder, and (Claude Code) how the hook treats project skills."""
    from mnemolog.adapters.agent_skills import SETTINGS_KEY, apply_sync, plan_sync, user_wide_skills
    from mnemolog.cli.command_store import store

    folder = target.home / "skills"
    with store() as s:
        sync = plan_sync(folder, user_wide_skills(s))
    manifest = _manifest(target.agent)
    previous = manifest.extra.get(SETTINGS_KEY) or {}
    created = previous.get("created_folder", not folder.exists())
    if not dry_run:
        apply_sync(sync)
        if previous.get("in_repo") and not in_repo:
            _take_out_of_repos(manifest)  # installed again without --project-skills-in-repo: the repositories are left clean
        manifest.extra[SETTINGS_KEY] = {"user_folder": str(folder), "in_repo": in_repo, "created_folder": created}
        manifest.save()
    return {
        **sync.as_dict(),
        "agent": target.agent,
        "in_repo": in_repo,
        "changed": sync.changes,
        "diff": "".join(edit.diff() for edit in sync.edits if edit.path.name != ".mnemolog-skill"),
    }


def _take_out_of_repos(manifest: Any) -> None:
    from mnemolog.adapters.agent_skills import REPOS_RECORD

    _remove_skill_folders(_repo_skill_folders(manifest), dry_run=False)
    (manifest.folder / REPOS_RECORD).unlink(missing_ok=True)


def _repo_skill_folders(manifest: Any) -> list[tuple[Path, tuple[Path, ...]]]:
    """Each repository's .claude/skills mnemolog wrote into, with the folders that go when nothing else is in them."""
    from mnemolog.adapters.agent_skills import REPOS_RECORD, load_record

    return [(Path(f), (Path(f), Path(f).parent)) for f in load_record(manifest.folder / REPOS_RECORD).get("repos", [])]


def _remove_skill_folders(folders: list[tuple[Path, tuple[Path, ...]]], dry_run: bool) -> list[dict[str, Any]]:
    """mnemolog's skills (the folders holding its marker) taken out of each folder; a report of each."""
    from mnemolog.adapters.agent_skills import apply_sync, plan_removal

    done = []
    for folder, drop in folders:
        sync = plan_removal(folder)
        if not dry_run:
            apply_sync(sync, drop)
        done.append({**sync.as_dict(), "diff": "".join(e.diff() for e in sync.edits if e.path.name != ".mnemolog-skill")})
    return done


def _trust_codex_hooks(target: Any, manifest: Any, codex: Path | None, no_trust: bool, dry_run: bool) -> str:
    import shutil

    from mnemolog.adapters import hook_json
    from mnemolog.adapters.codex_app_server import CodexAppServerError, trust_hooks

    how = "start codex, type /hooks and trust mnemolog's SessionStart, UserPromptSubmit and SessionEnd hooks"
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
    skill_folders = _uninstall_skills(manifest, dry_run)
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
        "skill_folders": skill_folders,
    }


def _uninstall_skills(manifest: Any, dry_run: bool) -> list[dict[str, Any]]:
    """Every skill folder mnemolog wrote (it holds the marker) taken out: Claude Code's user folder and the repositories."""
    from mnemolog.adapters.agent_skills import REPOS_RECORD, SETTINGS_KEY

    setup = manifest.extra.get(SETTINGS_KEY)
    if not isinstance(setup, dict) or not setup.get("user_folder"):
        return []
    user_folder = Path(setup["user_folder"])
    # A repository's .claude/skills (and .claude) go only when nothing but mnemolog's skills was in them.
    folders = [(user_folder, (user_folder,) if setup.get("created_folder") else ()), *_repo_skill_folders(manifest)]
    done = _remove_skill_folders(folders, dry_run)
    if not dry_run:
        (manifest.folder / REPOS_RECORD).unlink(missing_ok=True)
    return done


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
        if report.get("skills") is not None:
            _print_skills(report["skills"], report["dry_run"])
        return
    for change in report["files"]:
        how = "restored byte for byte" if change["restored_original"] else "mnemolog's entries taken out; later changes kept"
        console.print(f"{change['path']}: {how}{' (dry run)' if report['dry_run'] else ''}", highlight=False, markup=False)
    if not report["files"]:
        errors.print("nothing was recorded as installed", highlight=False)
    for sync in report.get("skill_folders", []):
        if sync["removed"]:
            verb = "would remove" if report["dry_run"] else "removed"
            console.print(f"{sync['folder']}: {verb} mnemolog's skills {', '.join(sync['removed'])}", highlight=False, markup=False)


def _print_skills(skills: dict[str, Any], dry_run: bool) -> None:
    written, removed = skills["written"], skills["removed"]
    if written or removed:
        verbs = ("would write", "would remove") if dry_run else ("wrote", "removed")
        parts = [f"{verbs[0]} {', '.join(written)}"] * bool(written) + [f"{verbs[1]} {', '.join(removed)}"] * bool(removed)
        console.print(f"skills: {'; '.join(parts)} in {skills['folder']}", highlight=False, markup=False)
    else:
        console.print(f"skills: user-wide skills go into {skills['folder']} (kept in step after each run and capture)", highlight=False, markup=False)
    for name in skills["kept_users"]:
        errors.print(f"warning: {skills['folder']}/{name} is your own skill: mnemolog's skill of that name is not written", highlight=False, markup=False)
    where = "in <repo>/.claude/skills, written by the SessionStart hook" if skills["in_repo"] else "in the SessionStart context of that project's sessions only"
    if skills["agent"] == "codex":
        where = "in the SessionStart context of that project's sessions only"
    console.print(f"project skills: {where}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add these commands to the app."""
    app.command()(install)
