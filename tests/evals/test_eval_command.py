"""`mnemolog eval`: the corpus CI keeps passing its thresholds, the docs' example runs, failures show.

The corpus (tests/evals/corpus) runs with the offline models through the CLI,
as CI and a user run it; the small example of docs/eval.md runs as written,
with the offline models and with a language model behind the tests'
OpenAI-compatible server (scripted answers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mnemolog.domain.extraction import StageOneOutput
from mnemolog.domain.plan import ConsolidationPlan, Edit, ItemKindName
from support.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "evals" / "corpus"
DOCS = ROOT / "docs" / "eval.md"


def test_the_corpus_passes_its_thresholds_with_the_offline_models(tmp_path: Path) -> None:
    result = run_cli("eval", str(CORPUS), "--model", "heuristic", "--json", env={"MNEMOLOG_HOME": str(tmp_path / "home")})
    report = result.json()
    assert result.code == 0, report["failed"]
    assert report["passed"] is True and report["failed"] == []
    metrics = report["metrics"]
    assert metrics["must_recall"] >= 0.9
    assert metrics["question_recall_at_5"] >= 0.9
    assert (metrics["distractors"], metrics["stale_served"], metrics["leaks"]) == (0, 0, 0)
    assert 0 < metrics["mrr"] <= 1
    assert report["run"]["sessions"] >= 40
    assert report["models"] == {"extract": "heuristic", "consolidate": "heuristic"}
    assert set(report["projects"]) == {"shop", "api", "infra", "mobile", "docs"}
    for miss in report["misses"]:  # any miss names where it came from
        assert miss["from"] and miss["type"] in ("must", "question")
    # the user's own home is untouched: the eval ran in a temporary store
    assert not (tmp_path / "home" / "events.sqlite").exists()


def test_the_corpus_holds_both_agents_sessions_and_several_projects() -> None:
    files = list(CORPUS.rglob("*.jsonl"))
    first_lines = [json.loads(path.read_text().splitlines()[0]) for path in files]
    codex = [line for line in first_lines if line.get("type") == "session_meta"]
    claude = [line for line in first_lines if "sessionId" in line or line.get("type") == "file-history-snapshot"]
    assert len(files) >= 40 and len(codex) >= 15 and len(claude) >= 15
    cwds = {line["payload"]["cwd"] for line in codex}
    assert len(cwds) >= 4


def _docs_example(folder: Path) -> Path:
    """Write the example corpus of docs/eval.md (each file is the code block after its name)."""
    text = DOCS.read_text()
    blocks = re.findall(r"^`(example/[^`]+)`.*?\n```(?:toml|json)\n(.*?)```", text, re.DOTALL | re.MULTILINE)
    assert len(blocks) == 4
    for name, body in blocks:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return folder / "example"


def test_the_docs_example_runs_as_documented(tmp_path: Path) -> None:
    example = _docs_example(tmp_path)
    result = run_cli("eval", str(example), "--model", "heuristic")
    assert result.code == 0, result.out + result.err
    shown = DOCS.read_text().split("mnemolog eval example --model heuristic\n```\n\n```\n", 1)[1].split("```", 1)[0]
    assert result.out.replace(str(example), "example") == shown


def test_a_failing_threshold_exits_non_zero_and_names_the_miss(tmp_path: Path) -> None:
    example = _docs_example(tmp_path)
    expectations = example / "expectations.toml"
    expectations.write_text(
        expectations.read_text()
        + '\n[[projects.must]]\nid = "yarn"\nterms = ["yarn berry"]\nfrom = "nowhere: no session says it"\n'
    )
    result = run_cli("eval", str(example), "--model", "heuristic", "--json")
    assert result.code == 1
    report = result.json()
    assert report["passed"] is False
    assert report["failed"] == ["must-fact recall 0.67 is below 1.00"]
    assert report["misses"] == [
        {"project": "web", "type": "must", "fact": "yarn", "terms": ["yarn berry"], "from": "nowhere: no session says it",
         "item": None, "sessions": [], "query": None, "rank": None}
    ]


def test_a_corpus_without_expectations_is_one_clear_error(tmp_path: Path) -> None:
    result = run_cli("eval", str(tmp_path))
    assert result.code == 1
    assert result.err.strip() == f"error: {tmp_path} is not an eval corpus: it has no expectations.toml"


def _stage_one(task: str, knowledge: str = "", preference: str = "") -> StageOneOutput:
    lines = ["---", f"task: {task}", "task_group: web", "task_outcome: success", "keywords: dev, server", "---", "", f"### Task 1: {task}", ""]
    if preference:
        lines += ["Preference signals:", f"- {preference}", ""]
    if knowledge:
        lines += ["Reusable knowledge:", f"- {knowledge}", ""]
    return StageOneOutput(rollout_summary=f"Worked on: {task}", rollout_slug=None, raw_memory="\n".join(lines))


def test_the_language_model_path_is_measured_the_same_way(tmp_path: Path, fake_openai) -> None:
    """The example against an OpenAI-compatible server: day by day, one extraction and one plan per day."""
    example = _docs_example(tmp_path)
    expectations = example / "expectations.toml"
    # a model words facts its own way: the stale fact is any current item still naming `make serve`
    expectations.write_text(expectations.read_text().replace('terms = ["`make serve` passed"]', 'terms = ["make serve"]'))
    day_one = _stage_one("Start the dev server", knowledge="Start the dev server with `make serve`.")
    day_two = _stage_one("Run the tests", preference="Use pnpm in this repo, not npm.")
    day_three = _stage_one("Fix the dev server", knowledge="Start the dev server with `pnpm dev`.")

    def add(kind: ItemKindName, text: str, title: str = "") -> Edit:
        return Edit(op="add", kind=kind, scope="SCOPE", task_group="web", title=title, text=text, evidence=("SESSION",))

    # Plans name the scope and the evidence session; the server is scripted, so the test fills them in
    # from what the eval makes: scope of the project folder, session ids derived from the native ids.
    from mnemolog.adapters.scope import normalise_remote
    from mnemolog.domain.session import session_id_for

    scope = f"git:{normalise_remote('git@github.com:example/web.git')}"

    def plan(session: str, *edits: Edit) -> ConsolidationPlan:
        sid = str(session_id_for(*session.split(":", 1)))
        return ConsolidationPlan(edits=tuple(e.model_copy(update={"scope": scope, "evidence": (sid,) if e.op == "add" else e.evidence}) for e in edits))

    fake_openai.queue(day_one)
    fake_openai.queue(plan("codex:0199a000-0000-7000-8000-000000000001", add(ItemKindName.KNOWLEDGE, "Start the dev server with `make serve`.")))
    fake_openai.queue(day_two)
    fake_openai.queue(plan("claude-code:3b0c7a52-9d1e-4f6a-8c2b-5e4d3c2b1a00", add(ItemKindName.PREFERENCE, "Use pnpm in this repo, not npm.")))
    fake_openai.queue(day_three)
    # I1 is the knowledge item, I2 the preference (handles follow scope, task group, kind)
    fake_openai.queue(plan(
        "codex:0199a000-0000-7000-8000-000000000003",
        add(ItemKindName.KNOWLEDGE, "Start the dev server with `pnpm dev`."),
        Edit(op="invalidate", target="I1", kind=ItemKindName.KNOWLEDGE, reason="`make serve` is gone"),
    ))
    # The scripted plans are in the full schema (a loopback server would otherwise get the compact one).
    env = {"OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000000", "MNEMOLOG_MODEL_SCHEMA": "full"}
    result = run_cli("eval", str(example), "--model", "scripted-model", "--json", env=env)
    report = result.json()
    assert result.code == 0, report
    assert report["models"] == {"extract": "scripted-model", "consolidate": "scripted-model"}
    assert report["metrics"]["must_recall"] == 1.0 and report["metrics"]["stale_served"] == 0
    assert report["run"]["days"] == 3
    assert fake_openai.pending == 0 and fake_openai.unexpected == 0
    assert [r.schema_name is not None for r in fake_openai.requests] == [True] * 6


def test_a_model_that_does_not_answer_fails_the_eval(tmp_path: Path, fake_openai) -> None:
    example = _docs_example(tmp_path)
    env = {"OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000000", "MNEMOLOG_MODEL_RETRIES": "0"}
    result = run_cli("eval", str(example), "--model", "silent-model", "--json", env=env)  # nothing queued: HTTP 418
    assert result.code == 1
    report = result.json()
    assert report["passed"] is False
    assert "3 extractions failed (the model did not answer)" in report["failed"]


# ------------------------------------------------------------------ the eval runs the user's pipeline, as `run` does

NOTE = "Remember: always pin the CI image by its digest."


def _failing_consolidation_env(fake_openai, home: Path) -> dict[str, str]:
    """Phase 1 offline, phase 2 a model that never answers (nothing queued: HTTP 418)."""
    return {
        "MNEMOLOG_HOME": str(home), "OPENAI_BASE_URL": fake_openai.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key-000000",
        "MNEMOLOG_EXTRACT_MODEL": "heuristic", "MNEMOLOG_CONSOLIDATE_MODEL": "silent-model", "MNEMOLOG_MODEL_RETRIES": "0",
    }


def test_a_model_failure_falls_back_to_the_offline_plan_in_run_and_in_eval(tmp_path: Path, fake_openai) -> None:
    example = _docs_example(tmp_path)
    env = _failing_consolidation_env(fake_openai, tmp_path / "home")

    ran = run_cli("run", str(example / "sessions"), "--all", "--json", env=env)
    assert ran.code == 0, ran.err
    consolidated = ran.json()["consolidate"]
    assert consolidated["status"] == "completed" and consolidated["model"] == "silent-model"
    assert consolidated["fallback"].startswith("model error") and consolidated["planned_by"] == "heuristic"
    assert "pnpm" in (tmp_path / "home" / "memories" / "MEMORY.md").read_text()

    evaluated = run_cli("eval", str(example), "--json", env=env)
    report = evaluated.json()
    assert evaluated.code == 0, report["failed"]
    assert report["models"] == {"extract": "heuristic", "consolidate": "silent-model"}
    assert report["passed"] is True and report["run"]["fallbacks"] == report["run"]["days"] == 3
    assert report["metrics"]["must_recall"] == 1.0
    shown = run_cli("eval", str(example), env=env).out
    assert "fallback: the offline consolidator planned 3 of 3 days' runs" in shown


def test_a_notes_file_reaches_memory_in_run_and_in_eval(tmp_path: Path) -> None:
    example = _docs_example(tmp_path)
    env = {"MNEMOLOG_HOME": str(tmp_path / "home"), "MNEMOLOG_EXTRACT_MODEL": "heuristic", "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic"}
    # Codex's ad-hoc notes, where a user (or Codex) leaves them in the memory folder
    notes = tmp_path / "home" / "memories" / "extensions" / "ad_hoc" / "notes"
    notes.mkdir(parents=True)
    (notes / "ci.md").write_text(NOTE + "\n")
    ran = run_cli("run", str(example / "sessions"), "--all", "--json", env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["consolidate"]["notes_files"]["imported"] == ["extensions/ad_hoc/notes/ci.md"]
    assert "pin the CI image by its digest" in (tmp_path / "home" / "memories" / "MEMORY.md").read_text()

    # The corpus carries the same file where a memory folder keeps it; a must-fact names it.
    corpus_notes = example / "extensions" / "ad_hoc" / "notes"
    corpus_notes.mkdir(parents=True)
    (corpus_notes / "ci.md").write_text(NOTE + "\n")
    expectations = example / "expectations.toml"
    expectations.write_text(
        expectations.read_text()
        + '\n[[projects.must]]\nid = "ci-image"\nterms = ["pin the CI image by its digest"]\nfrom = "extensions/ad_hoc/notes/ci.md"\n'
    )
    evaluated = run_cli("eval", str(example), "--json", env=env)
    report = evaluated.json()
    assert evaluated.code == 0, report["failed"]
    assert (report["metrics"]["must_found"], report["metrics"]["must_total"]) == (3, 3)
