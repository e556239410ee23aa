"""Prompt-time recall on the decision corpus: a question about a past decision gets it, a prompt about nothing remembered gets nothing.

The corpus (tests/evals/decisions) is replayed through the whole pipeline with
the offline models, as ``mnemolog eval`` does; then each decision's question
is a prompt of a new session of its project, and so is each of the prompts
below, written as real prompts are (the shared fixtures' user turns) about
nothing either project's history holds. The rates are printed (``-s``); the
bounds are loose: the floor is absolute, so it trades some decisions asked in
other words for silence on everyday prompts, and silence matters more (an
unrelated recall costs every prompt tokens and the model's attention).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mnemolog.adapters.eval_corpus import SteppedClock, open_eval_store, prepare
from mnemolog.adapters.settings import Settings
from mnemolog.domain.services.evaluate import evaluate
from mnemolog.domain.services.injections import served_prompt_recall

CORPUS = Path(__file__).resolve().parent / "decisions"

UNRELATED = (
    "fix the typo in the README",
    "can you add a --verbose flag to the cli",
    "what does this error mean: TypeError: 'NoneType' object is not subscriptable",
    "rename the helper function to something clearer",
    "write a unit test for the date parser",
    "bump the version to 2.3.1 and update the changelog",
    "why is CI red on my branch?",
    "add type hints to utils.py",
    "make the logo bigger on the landing page",
    "refactor this loop into a list comprehension",
    "the dark mode toggle does nothing on safari",
    "can you explain what this regex does: ^[a-z]+(-[a-z]+)*$",
    "update the dependencies in requirements.txt",
    "set up pre-commit with black and isort",
    "translate the error messages into german",
    "add a dockerfile for local development",
    "sort the imports in main.py",
    "the login button is misaligned on mobile",
    "add a progress bar to the download script",
    "delete the unused css classes",
    "what does this error mean: ModuleNotFoundError: No module named 'yaml'",
    "write a github action that runs the tests on push",
    "how do I squash my last three commits?",
    "the tooltip text is cut off in firefox, can you fix it",
)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The corpus replayed into a fresh store with the offline models; the store and the prepared corpus."""
    workspace = tmp_path_factory.mktemp("prompt-recall")
    prepared = prepare(CORPUS, workspace)
    clock = SteppedClock()
    store = open_eval_store(workspace, clock, Settings(home=workspace / "store", extract_model="heuristic", consolidate_model="heuristic"))
    ports = store.ports
    evaluate(
        store, prepared, ports=ports.pipeline("heuristic"), policy=ports.pipeline_policy(all_=True, now=clock()),
        tokenizer=ports.tokenizer, instructions=ports.instructions, set_clock=clock.set, history=store.recall,
    )
    yield store, prepared
    store.close()


def test_a_question_about_a_past_decision_gets_it_and_an_everyday_prompt_gets_nothing(replayed: Any) -> None:
    store, prepared = replayed
    history, tokenizer = store.recall(), store.ports.tokenizer
    assert not history.semantic, f"the packaged embedding model must run here: {history.semantic}"
    decisions = got = 0
    for project in prepared.expectations.projects:
        scope = prepared.scopes[project.name]
        for n, decision in enumerate(project.decisions):
            found = served_prompt_recall(store, history, tokenizer, decision.question, scope, session=f"eval-{project.name}-{n}")
            assert found.tokens <= 300
            decisions += 1
            got += all(term.casefold() in found.text.casefold() for term in decision.terms)
    unrelated = served = 0
    for project in prepared.expectations.projects:
        scope = prepared.scopes[project.name]
        for n, prompt in enumerate(UNRELATED):
            found = served_prompt_recall(store, history, tokenizer, prompt, scope, session=f"everyday-{project.name}-{n}")
            unrelated += 1
            served += bool(found.text)
    relevant_rate, unrelated_rate = got / decisions, served / unrelated
    print(f"\nprompt recall: decision served {got}/{decisions} = {relevant_rate:.2f}; unrelated served {served}/{unrelated} = {unrelated_rate:.2f}")
    assert relevant_rate >= 0.6
    assert unrelated_rate <= 0.1
