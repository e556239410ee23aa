"""Golden test: a fixed FolderModel renders to the checked-in files byte for byte.

Regenerate after an intended format change with
``UPDATE_GOLDEN=1 pytest tests/unit/test_folder_golden.py`` and review the diff.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from mnemolog.adapters.folder_writer import write_folder
from mnemolog.domain.reads import ItemRow
from mnemolog.projections.folder_model import FolderModel, FolderSession
from mnemolog.projections.markdown_folder import render_folder
from support.folder_validator import validate_folder

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "folder_basic"

S_CODEX = "11111111-1111-4111-8111-111111111111"
S_CLAUDE = "22222222-2222-4222-8222-222222222222"
S_OTHER = "33333333-3333-4333-8333-333333333333"


def words(text: str) -> int:
    """Token counter for tests: whitespace-separated words."""
    return len(text.split())


def at(day: int, hour: int = 12, minute: int = 0) -> datetime:
    return datetime(2025, 2, day, hour, minute, tzinfo=UTC)


def sample_model(project: str | None = None) -> FolderModel:
    """Two projects (shop, infra) plus global items, three sessions, one UUIDv7 id."""
    sessions = (
        FolderSession(
            session_id=S_CODEX,
            native_id="0194f5a6-89ab-7cde-8123-456789abcdef",
            source="codex",
            path="/home/ada/.codex/sessions/2025/02/11/rollout-2025-02-11T16-35-19-0194f5a6-89ab-7cde-8123-456789abcdef.jsonl",
            cwd="/home/ada/src/shop",
            scope="proj:shop",
            git_branch="main",
            started_at=at(11, 15, 35),
            updated_at=datetime(2025, 2, 11, 16, 2, 7, 250000, tzinfo=UTC),
            rollout_summary="Fixed the flaky checkout test by freezing time.\nRan `make test`.",
            rollout_slug="Fix flaky checkout test",
            raw_memory="---\ndescription: checkout test fix\ntask_group: shop tests\n---\n### Task 1\nFroze time.\n",
        ),
        FolderSession(
            session_id=S_CLAUDE,
            native_id="9b2f6c1e-4d3a-4e5f-8a7b-0c1d2e3f4a5b",
            source="claude-code",
            path="/home/ada/.claude/projects/-home-ada-src-shop/9b2f6c1e-4d3a-4e5f-8a7b-0c1d2e3f4a5b.jsonl",
            cwd="/home/ada/src/shop",
            scope="proj:shop",
            git_branch=None,
            started_at=at(1, 9),
            updated_at=at(1, 10, 30),
            rollout_summary="Set up the payment sandbox keys from the vault.",
            rollout_slug=None,
            raw_memory="description: payment sandbox setup\n",
        ),
        FolderSession(
            session_id=S_OTHER,
            native_id="infra-run-42",
            source="claude-code",
            path="/srv/logs/infra-run-42.jsonl",
            cwd="/home/ada/src/infra",
            scope="proj:infra",
            git_branch="deploy",
            started_at=at(10, 8),
            updated_at=at(10, 9),
            rollout_summary="Terraform plan failed on a stale lock; removed it with force-unlock.",
            rollout_slug="terraform: stale lock!",
            raw_memory="description: terraform lock\n",
        ),
    )

    def item(
        n: int, kind: str, scope: str, group: str, title: str, text: str, **kw: object
    ) -> ItemRow:
        fields: dict[str, object] = {
            "item_id": UUID(f"00000000-0000-4000-8000-0000000000{n:02d}"),
            "kind": kind,
            "scope": scope,
            "task_group": group,
            "title": title,
            "text": text,
            "keywords": (),
            "evidence": (),
            "trust": "accepted",
            "valid_from": None,
            "updated_at": at(11),
        }
        fields.update(kw)
        fields["evidence"] = tuple(UUID(str(e)) for e in fields["evidence"])  # type: ignore[attr-defined,unused-ignore]
        return ItemRow(**fields)  # type: ignore[arg-type,unused-ignore]

    items = (
        item(
            1,
            "preference",
            "global",
            "working style",
            "Short answers",
            "Answer briefly and show the command first.",
            use_count=5,
        ),
        item(
            2,
            "preference",
            "proj:shop",
            "shop tests",
            "pytest -x",
            "Run the shop tests with `pytest -x -q`.",
            evidence=(S_CODEX,),
            trust="proposed",
        ),
        item(
            3,
            "knowledge",
            "global",
            "working style",
            "ripgrep",
            "Use rg instead of grep -r; it respects .gitignore.",
            use_count=2,
        ),
        item(
            4,
            "failure",
            "proj:shop",
            "shop tests",
            "Flaky checkout test",
            "Checkout test fails near midnight -> uses the wall clock -> freeze time with the clock fixture.",
            evidence=(S_CODEX,),
            use_count=3,
        ),
        item(
            5,
            "task",
            "proj:shop",
            "shop tests",
            "Fix flaky checkout test (success)",
            "Froze time in the checkout test.",
            keywords=("checkout", "flaky", "freezegun"),
            evidence=(S_CODEX,),
            updated_at=at(11, 16),
        ),
        item(
            6,
            "task",
            "proj:shop",
            "payments",
            "Payment sandbox setup (partial)",
            "Set up sandbox keys.",
            keywords=("stripe", "sandbox"),
            evidence=(S_CLAUDE,),
            updated_at=at(1, 11),
        ),
        item(
            7,
            "task",
            "proj:infra",
            "terraform",
            "Clear a stale terraform lock (success)",
            "force-unlock after checking no run is active.",
            keywords=("terraform", "lock"),
            evidence=(S_OTHER,),
            updated_at=at(10, 9),
        ),
        item(
            8,
            "knowledge",
            "proj:infra",
            "terraform",
            "Lock check",
            "Check `terraform show` for running applies before force-unlock.",
            evidence=(S_OTHER,),
            trust="proposed",
        ),
        item(
            9,
            "knowledge",
            "proj:infra",
            "terraform",
            "Rejected idea",
            "Delete the state bucket.",
            trust="rejected",
        ),
    )
    return FolderModel(
        items=items,
        sessions=sessions,
        user_profile="Ada is a backend engineer who works on a shop and its infrastructure.\n\n"
        "* Prefers **terse** answers.",
        project=project,
        scope_labels={"proj:shop": "shop (github.com/ada/shop)", "proj:infra": "infra"},
    )


def _compare(rendered: dict[str, str], golden: Path) -> None:
    if os.environ.get("UPDATE_GOLDEN") == "1":
        write_folder(rendered, golden)
        return
    on_disk = {
        str(p.relative_to(golden)): p.read_text(encoding="utf-8")
        for p in sorted(golden.rglob("*"))
        if p.is_file()
    }
    assert sorted(on_disk) == sorted(rendered)
    for path, text in rendered.items():
        assert on_disk[path] == text, f"{path} differs from the golden file"


def test_golden_folder_matches_byte_for_byte() -> None:
    _compare(render_folder(sample_model(), words), GOLDEN)


def test_golden_folder_is_valid(tmp_path: Path) -> None:
    write_folder(render_folder(sample_model(), words), tmp_path / "memories")
    assert validate_folder(tmp_path / "memories", words) == []
    assert validate_folder(GOLDEN, words) == []
