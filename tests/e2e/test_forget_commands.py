"""forget, lift, explain, audit, history, prune and reset as a user runs them (in process)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from support.cli import run_cli
from support.forgetting import SECRET, started_home


def test_forget_then_read_the_story(tmp_path: Path) -> None:
    started = started_home(tmp_path)
    env, item_id = started.env, started.item_id
    time.sleep(0.01)
    before_forget = datetime.now(UTC).isoformat()
    time.sleep(0.01)

    forgot = run_cli("forget", SECRET, "--json", env=env)
    assert forgot.code == 0, forgot.err
    data = forgot.json()
    assert data["retired"] == [item_id] and data["scope"] == "global" and not data["already"]
    tombstone = data["tombstone"]
    plain = run_cli("forget", "-", env=env, stdin=SECRET.upper() + "\n")
    assert plain.code == 0 and f"tombstone {tombstone} was already in force" in plain.out
    for result in (forgot, plain):
        assert "falcon" not in (result.out + result.err).lower()

    story = run_cli("explain", item_id, "--project", "git:github.com/acme/api", "--json", env=env)
    assert story.code == 0, story.err
    told = story.json()
    assert told["now"]["status"] == "retired" and [h["action"] for h in told["history"]] == ["added", "retired"]
    assert told["history"][1]["tombstone"] == tombstone and told["history"][1]["by"] == "user"
    assert "falcon" not in story.out.lower()
    by_text = run_cli("explain", "deploy staging", "--project", "git:github.com/acme/api", env=env)
    assert by_text.code == 0 and item_id in by_text.out and "[forgotten]" in by_text.out and "falcon" not in by_text.out.lower()

    audit = run_cli("audit", "--json", env=env)
    assert audit.code == 0, audit.err
    report = audit.json()
    assert report["status"] == "completed" and {e["op"] for e in report["edits"]} == {"add"}
    assert "falcon" not in audit.out.lower()
    runs = run_cli("audit", "--since", "2000-01-01", "--json", env=env).json()["runs"]
    assert [r["consolidation"] for r in runs] == [report["consolidation"]]

    past = run_cli("history", "--as-of", before_forget, "--out", str(tmp_path / "then"), "--json", env=env)
    assert past.code == 0, past.err
    assert "MEMORY.md" in past.json()["files"] and (tmp_path / "then" / "MEMORY.md").exists()
    assert "falcon" not in (tmp_path / "then" / "MEMORY.md").read_text().lower()  # tombstones in force apply to the past too
    assert "CSV" in (tmp_path / "then" / "MEMORY.md").read_text()
    valid = run_cli("history", "--valid-at", datetime.now(UTC).isoformat(), "--json", env=env)
    assert valid.code == 0 and [i["title"] for i in valid.json()["items"]] == ["CSV export"]

    lifted = run_cli("lift", tombstone, "--json", env=env)
    assert lifted.code == 0 and lifted.json() == {
        "tombstone": tombstone, "lifted": True, "folder": None, "restored_sessions": [started.session_id], "restored_notes": [],
    }
    assert run_cli("lift", "00000000-0000-0000-0000-000000000009", env=env).code == 5
    assert run_cli("explain", "00000000-0000-0000-0000-000000000009", env=env).code == 5
    assert run_cli("audit", "00000000-0000-0000-0000-000000000009", env=env).code == 5
    assert run_cli("forget", "--item", "00000000-0000-0000-0000-000000000009", env=env).code == 5
    assert run_cli("forget", env=env).code == 2

    refused = run_cli("reset", env=env, stdin="n\n")
    assert refused.code == 1
    reset = run_cli("reset", "--yes", "--json", env=env)
    assert reset.code == 0 and len(reset.json()["pruned"]) == 2 and len(reset.json()["retired"]) == 1
    assert run_cli("prune", "--json", env=env).json() == {"pruned": [], "retired": [], "folder": None}


def test_forget_a_session_by_the_agents_own_id(tmp_path: Path) -> None:
    from support.sessions import thread_id

    started = started_home(tmp_path)
    env, session_id = started.env, started.session_id

    done = run_cli("forget", "--session", thread_id(1), "--json", env=env)

    assert done.code == 0, done.err
    assert done.json()["session"] == session_id and done.json()["deleted"] is True
    missing = run_cli("forget", "--session", "no-such-session", env=env)
    assert missing.code == 5 and "no session no-such-session" in missing.err


def test_the_memory_folder_follows_forget_review_and_lift_without_a_render(tmp_path: Path) -> None:
    """Guarantee 7: the folder agents read shows each change when the command returns."""
    started = started_home(tmp_path)
    home, env = started.home, started.env
    folder = home / "memories"

    def folder_text() -> str:
        return "\n".join(p.read_text() for p in sorted(folder.rglob("*.md")))

    assert run_cli("render", env=env).code == 0
    assert SECRET in folder_text() and "CSV" in folder_text()

    forgot = run_cli("forget", SECRET, "--json", env=env)
    assert forgot.code == 0, forgot.err
    assert forgot.json()["folder"] == str(folder)
    assert "falcon" not in folder_text().lower() and "CSV" in folder_text()

    hits = run_cli("search", "CSV", "--project", "git:github.com/acme/api", "--json", env=env).json()["hits"]
    assert hits, "the clean item is still in memory"
    rejected = run_cli("review", hits[0]["id"], "--reject", "--project", "git:github.com/acme/api", env=env)
    assert rejected.code == 0 and "memory folder" in rejected.out, rejected.out
    assert hits[0]["id"] not in folder_text()

    lifted = run_cli("lift", forgot.json()["tombstone"], "--json", env=env)
    assert lifted.code == 0 and lifted.json()["folder"] == str(folder)


def test_forget_on_a_store_never_rendered_writes_no_folder(tmp_path: Path) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path / "home")}
    forgot = run_cli("forget", "some value", "--json", env=env)
    assert forgot.code == 0 and forgot.json()["folder"] is None
    assert not (tmp_path / "home" / "memories").exists()


def test_forgetting_a_projects_name_keeps_its_memory_and_its_offline_consolidations(tmp_path: Path) -> None:
    """The offline plans group a project's items under its name: forgetting that name retired them all,
    then refused every later plan whole ("the edit contains a forgotten value"), other projects' edits too."""
    from support.sessions import thread_id, write_rollout

    env = {"MNEMOLOG_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "user")}
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    project = "git:github.com/acme/orion-falcon"

    def session(n: int, text: str) -> str:
        return str(write_rollout(tmp_path / "s", thread_id(n), text, cwd="/home/dev/acme/orion-falcon", remote="git@github.com:acme/orion-falcon.git", when=now))

    assert "consolidate completed" in run_cli("capture", session(1, "Always run make lint before pushing."), env=env).out
    kept = run_cli("list", "items", "--project", project, "--json", env=env).json()["items"]
    assert kept and {i["task_group"] for i in kept} == {"orion-falcon"}

    forgot = run_cli("forget", "orion falcon", "--yes", env=env)
    assert forgot.code == 0 and "0 item(s) retired" in forgot.out, forgot.out
    later = run_cli("capture", session(2, "Never commit generated files; run make gen instead."), env=env)
    assert later.code == 0 and "consolidate completed" in later.out, later.out
    texts = " ".join(i["text"] for i in run_cli("list", "items", "--project", project, "--json", env=env).json()["items"])
    assert "make lint" in texts and "make gen" in texts
