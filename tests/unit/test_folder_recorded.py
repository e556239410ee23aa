"""The folder renders byte for byte as the renderer before streaming did (recorded digests).

``tests/unit/data/folder_digests.json`` holds the SHA-256 of every file the
renderer wrote before ``MEMORY.md`` was streamed and ``memory_summary.md`` was
fitted from per-line counts (commit e1b830f), for varied models: skills,
four scopes, forty task groups, tasks over sixty days, sessions, a profile;
summaries cut by the real o200k tokenizer and by word counts, at several
budgets, for the shared folder and for one project. Regenerate only for an
intended format change: ``.venv/bin/python tests/unit/test_folder_recorded.py``.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.projections.folder_model import FolderModel, FolderSession
from mnemolog.projections.markdown_folder import render_folder, render_skills
from support.folder_models import words

RECORDED = Path(__file__).parent / "data" / "folder_digests.json"
BASE = datetime(2025, 6, 30, 12, tzinfo=UTC)
KINDS = ("preference", "knowledge", "failure", "task", "task", "skill")
SCOPES = ("global", "git:example.com/acme/api", "git:example.com/acme/billing", "proj:c")
WORDS = ["alpha", "beta", "gamma", "delta", "tests", "deploy", "make", "**bold**", "`code`", "c++", "/usr/bin", "naïve", "日本"]


def _session(n: int, scope: str) -> FolderSession:
    return FolderSession(
        session_id=f"5e55{n:04x}-0000-4000-8000-000000000000",
        native_id=f"0197{n:04x}-0000-7000-8000-{n:012x}",
        source="codex" if n % 2 else "claude-code",
        path=f"/home/u/.codex/sessions/rollout-{n}.jsonl",
        cwd=f"/src/{scope.rsplit('/', 1)[-1]}" if n % 5 else "",
        scope=scope,
        git_branch="main" if n % 3 else None,
        started_at=BASE - timedelta(days=n, hours=1),
        updated_at=BASE - timedelta(days=n),
        rollout_summary=f"summary {n}\nran `make test`",
        rollout_slug=f"session {n}" if n % 4 else None,
        raw_memory=f"raw memory {n}",
    )


def varied_model(n_items: int, seed: int = 7, project: str | None = None) -> FolderModel:
    """Items of every kind in four scopes, forty task groups, sixty days, thirty sessions, skills."""
    rng = random.Random(seed)
    sessions = tuple(_session(n, SCOPES[1 + n % 3]) for n in range(30))
    items = []
    for n in range(n_items):
        scope = SCOPES[n % 4]
        kind = KINDS[n % 6]
        scoped = [s.session_id for s in sessions if s.scope == scope] or [sessions[n % 30].session_id]
        name = f"skill-{n % 7}"  # clashing names across scopes: the shared folder renames them
        items.append(
            ItemRow(
                item_id=UUID(f"00000000-0000-4000-8000-{n:012d}"),
                kind=kind,
                scope=scope,
                task_group=rng.choice([f"group {n % 40}", "", f"group  {n % 3}"]),
                title=rng.choice(["", f"Title number {n} about {rng.choice(WORDS)}"]),
                text=" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 60))),
                keywords=tuple(f"kw{rng.randint(0, 30)}" for _ in range(rng.randint(0, 4))),
                evidence=tuple(UUID(s) for s in rng.sample(scoped, min(rng.randint(0, 3), len(scoped)))),
                trust=rng.choice(["accepted", "proposed", "doubted", "rejected"]),
                valid_from=BASE - timedelta(days=rng.randint(0, 90)) if n % 7 == 0 else None,
                created_at=BASE - timedelta(days=70),
                updated_at=BASE - timedelta(days=rng.randint(0, 60), minutes=n % 5),
                use_count=rng.randint(0, 20),
                pinned=n % 37 == 0,
                skill=Skill(
                    name=name,
                    steps=(SkillStep(command="make deps"), SkillStep(command="make test", action="runs the tests")),
                    relies_on=("make",),
                )
                if kind == "skill"
                else None,
            )
        )
    return FolderModel(
        items=tuple(items),
        sessions=sessions,
        user_profile="The user writes **Python**.\n* prefers small commits\n# notes\n" + "and tests " * 30,
        project=project,
        scope_labels={s.scope: s.scope.rsplit("/", 1)[-1] for s in sessions},
    )


CASES = {
    f"{n}-{project or 'all'}-{name}-{budget}": (n, project, counter, budget)
    for n in (40, 600)
    for project in (None, "git:example.com/acme/api")
    for name, counter in (("o200k", count_tokens), ("words", words))
    for budget in (300, 2500, 10**9)
}


def _digests(files: dict[str, str]) -> dict[str, str]:
    return {path: hashlib.sha256(text.encode()).hexdigest() for path, text in files.items()}


def _render(case: str) -> dict[str, str]:
    n, project, counter, budget = CASES[case]
    return render_folder(varied_model(n, project=project), counter, budget)


def record() -> None:
    """Write the digests of today's renders (an intended format change only)."""
    RECORDED.write_text(json.dumps({case: _digests(_render(case)) for case in CASES}, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("case", sorted(CASES))
def test_folder_is_byte_identical_to_the_recorded_render(case: str) -> None:
    recorded = json.loads(RECORDED.read_text())[case]
    files = _render(case)
    assert _digests(files) == recorded
    skills = render_skills(varied_model(CASES[case][0], project=CASES[case][1]))
    assert {f"skills/{name}/SKILL.md": text for name, text in skills.items()} == {p: t for p, t in files.items() if p.startswith("skills/")}


@pytest.mark.parametrize("profile", ["", "/home/ada works here.\n  - indented", "ends with punctuation?!", "x" * 50 + "\n\n\n/ / /"])
def test_a_plans_summed_tokens_are_its_texts_tokens(profile: str) -> None:
    """What the fit relies on: o200k counts a summary as the sum of its lines' pieces (every kind of plan)."""
    from dataclasses import replace

    from mnemolog.projections import markdown_folder as folder

    model = replace(varied_model(300), user_profile=profile)
    view = folder._view(model, folder._Counter(count_tokens))
    renderer = folder._SummaryRenderer(view, folder._Counter(count_tokens))
    ranked, groups = len(renderer.ranked), len(renderer.group_rank)
    plans = [(n, groups, 350) for n in range(0, ranked + 1, 17)] + [(0, g, 350) for g in range(groups + 1)] + [(0, 0, w) for w in (0, 1, 7)]
    for kept, shown_groups, profile_words in plans:
        plan = folder._SummaryPlan(kept, shown_groups, profile_words)
        assert renderer.tokens(plan) == count_tokens(renderer.render(plan)), plan


if __name__ == "__main__":
    record()
