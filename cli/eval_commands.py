"""``mnemolog eval CORPUS``: measure what the next session of each project gets from a corpus."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer
from mnemolog.cli.output import Exit, UserError, console, emit_json, progress_bar

JSON = typer.Option(False, "--json", help="Print every metric and every miss as JSON.")
MODEL = typer.Option(None, "--model", help="Model name for both phases, or 'heuristic' for the offline models (default: as configured).")


def evaluate(
    corpus: Path = typer.Argument(..., help="An eval corpus: a folder with expectations.toml and session files (docs/eval.md)."),
    model: str | None = MODEL,
    json_out: bool = JSON,
) -> None:
    """Run the whole pipeline on an eval corpus in a fresh temporary store and score what each project's next session gets.

    Exit status 1 when a threshold of the corpus fails.
    """
    from mnemolog.adapters.eval_corpus import CorpusError, SteppedClock, open_eval_store, prepare
    from mnemolog.adapters.settings import load_settings
    from mnemolog.domain.services.evaluate import evaluate as run_eval

    if not corpus.is_dir():
        raise UserError(f"not a folder: {corpus}", Exit.USAGE)
    try:
        settings = load_settings()
    except Exception as error:  # settings that do not validate
        raise UserError(f"invalid configuration: {error}") from error
    with tempfile.TemporaryDirectory(prefix="mnemolog-eval-") as workspace:
        try:
            prepared = prepare(corpus, Path(workspace))
        except CorpusError as error:
            raise UserError(str(error)) from error
        clock = SteppedClock()
        store = open_eval_store(Path(workspace), clock, settings)
        try:
            ports = store.ports  # the user's settings, in the eval's store and memory folder
            with progress_bar("eval", enabled=not json_out) as bar:
                report = run_eval(
                    store,
                    prepared,
                    ports=ports.pipeline(model),
                    policy=ports.pipeline_policy(all_=True, now=clock()),  # a corpus is a first import of its history
                    tokenizer=ports.tokenizer,
                    instructions=ports.instructions,
                    set_clock=clock.set,
                    history=store.recall,
                    progress=bar,
                )
        finally:
            store.close()
    data = {"corpus": str(corpus), **report.as_dict()}
    if json_out:
        emit_json(data)
    else:
        _print(data)
    if not report.passed:
        raise typer.Exit(int(Exit.ERROR))


def _print(data: dict[str, Any]) -> None:
    from rich.markup import escape

    run, metrics, limits = data["run"], data["metrics"], data["thresholds"]
    console.print(
        f"eval {escape(data['corpus'])} (extract: {data['models']['extract']}, consolidate: {data['models']['consolidate']}): "
        f"{run['sessions']} sessions over {run['days']} days; {run['extracted']} extracted, {run['nothing']} with nothing to keep",
        highlight=False,
    )
    if run["fallbacks"]:
        console.print(f"  fallback: the offline consolidator planned {run['fallbacks']} of {run['days']} days' runs", highlight=False)
    console.print(
        f"  must-fact recall {metrics['must_recall']:.2f} ({metrics['must_found']}/{metrics['must_total']}, at least {limits['must_recall']:.2f})\n"
        f"  question recall@5 {metrics['question_recall_at_5']:.2f} over {metrics['questions']} questions (at least {limits['question_recall_at_5']:.2f}), MRR {metrics['mrr']:.2f}\n"
        f"  distractors {metrics['distractors']} (at most {limits['max_distractors']}), "
        f"stale served {metrics['stale_served']} (at most {limits['max_stale']}), leaks {metrics['leaks']} (at most {limits['max_leaks']})",
        highlight=False,
    )
    if metrics["decisions"]:
        paraphrased = (
            f", paraphrased {metrics['paraphrase_recall_at_5']:.2f} over {metrics['paraphrases']} (at least {limits['paraphrase_recall_at_5']:.2f})"
            if metrics["paraphrases"] else ""
        )
        console.print(
            f"  decision recall@5 {metrics['decision_recall_at_5']:.2f} over {metrics['decisions']} decisions "
            f"(at least {limits['decision_recall_at_5']:.2f}; BM25 over the raw chats {metrics['bm25_decision_recall_at_5']:.2f}){paraphrased}\n"
            f"  stale above current {metrics['stale_above_current']} (at most {limits['max_stale_above_current']})",
            highlight=False, markup=False,
        )
    for miss in data["misses"]:
        where = f" from {miss['from']}" if miss["from"] else ""
        served = f" served as item {miss['item']} (sessions {', '.join(miss['sessions']) or 'none'})" if miss["item"] else ""
        query = f" for the search {miss['query']!r}" if miss["query"] else ""
        console.print(f"  miss [{miss['type']}] {miss['project']}: {miss['fact']}{where}{query}{served}", highlight=False, markup=False)
    console.print("passed" if data["passed"] else "FAILED: " + "; ".join(data["failed"]), highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add the eval command to the app."""
    app.command(name="eval")(evaluate)
