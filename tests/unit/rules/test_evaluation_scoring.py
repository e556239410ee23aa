"""Scoring an eval: must facts, questions (recall@5, MRR), distractors, stale facts, leaks, thresholds."""

from __future__ import annotations

from mnemolog.domain.evaluation import Expectations, Served, ServedItem, score


def item(n: int, text: str, kind: str = "knowledge", scope: str = "git:a") -> ServedItem:
    return ServedItem(f"i{n}", kind, scope, text, (f"s{n}",))


EXPECT = Expectations.model_validate(
    {
        "user_wide": [{"id": "mood", "terms": ["imperative mood"], "kind": "preference", "user_wide": True, "from": "s9"}],
        "projects": [
            {
                "name": "a",
                "remote": "git@x:a.git",
                "cwd": "/a",
                "must": [
                    {"id": "pnpm", "terms": ["pnpm", "not npm"], "kind": "preference", "from": "s1"},
                    {"id": "dev", "terms": ["pnpm dev"], "from": "s2"},
                ],
                "must_not": [
                    {"id": "old", "terms": ["`make serve` passed"], "why": "stale", "from": "s0"},
                    {"id": "paste", "terms": ["valid key"], "from": "s3"},
                ],
                "questions": [{"query": "dev server", "fact": "dev"}, {"query": "package manager", "fact": "pnpm"}],
            },
            {"name": "b", "remote": "git@x:b.git", "cwd": "/b", "must": [{"id": "b-lint", "terms": ["ruff"], "from": "s5"}]},
        ],
    }
)


def test_a_project_served_well_passes() -> None:
    mood = item(9, "write commit messages in the imperative mood", "preference", "global")
    pnpm = item(1, "use pnpm in this repo, not npm", "preference")
    dev = item(2, "`pnpm dev` passed")
    served = {
        "a": Served((mood, pnpm, dev), {"dev server": (item(7, "other"), dev), "package manager": (pnpm,)}),
        "b": Served((mood, item(5, "`ruff check .` passed", scope="git:b")), {}),
    }
    result = score(EXPECT, served)
    total = result.as_dict()["metrics"]
    assert total["must_recall"] == 1.0 and total["must_total"] == 5
    assert total["question_recall_at_5"] == 1.0 and total["mrr"] == 0.75
    assert result.failures() == [] and result.misses == []


def test_misses_name_where_they_came_from_and_break_thresholds() -> None:
    stale = item(0, "`make serve` passed")
    paste = item(3, "Make sure to provide a valid key")
    leak = item(5, "`ruff check .` passed", scope="global")  # b's own fact, made global
    wrong_scope = item(9, "write commit messages in the imperative mood", "preference", "git:a")
    served = {
        "a": Served((stale, leak, wrong_scope), {"`make serve` passed": (stale,), "valid key": (paste,)}),
        "b": Served((), {}),
    }
    result = score(EXPECT, served)
    kinds = sorted((m.project, m.type, m.fact) for m in result.misses)
    assert kinds == [
        ("a", "distractor", "paste"),
        ("a", "leak", "b-lint"),
        ("a", "must", "dev"),
        ("a", "must", "mood"),  # stated, but as a project item: not user-wide
        ("a", "must", "pnpm"),
        ("a", "question", "dev"),
        ("a", "question", "pnpm"),
        ("a", "stale", "old"),
        ("b", "must", "b-lint"),
        ("b", "must", "mood"),
    ]
    stale_miss = next(m for m in result.misses if m.type == "stale")
    assert stale_miss.as_dict()["sessions"] == ["s0"] and stale_miss.item == "i0" and stale_miss.source == "s0"
    assert result.failures() == [
        "must-fact recall 0.00 is below 0.90",
        "question recall@5 0.00 is below 0.90",
        "1 distractors served (at most 0)",
        "1 stale facts served as current (at most 0)",
        "1 leaks across projects (at most 0)",
    ]
    assert result.as_dict()["passed"] is False
