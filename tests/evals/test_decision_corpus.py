"""The decision corpus (tests/evals/decisions) is what it claims to be: checked on its files, no store.

Each decision's words are the user's, verbatim, in its session; its terms are
in that session and in no decoy of its project (a decoy must not score as
the decision); the later question does not give the answer away; the
paraphrase shares no content word with what the user said; amendments point
at a decision they really amend; there are three decoys per decision chat.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mnemolog.adapters.eval_corpus import load_expectations
from mnemolog.domain.evaluation import Decision, Expectations

CORPUS = Path(__file__).resolve().parent / "decisions"

_STOPWORDS = (
    "a an and are as at be been but by can could did do does doesn don for from get got had has have how if in into is isn it its "
    "just let me more most much my no not now of off ok on one only or our out over own same should so some such than that the "
    "their them then there these they this those to too up us was we were what whats when where which while who why will with "
    "would yes you your all any also after before both each few many other very via per"
)
STOPWORDS = frozenset(_STOPWORDS.split())


def _expectations() -> Expectations:
    return load_expectations(CORPUS)


def _decisions(expectations: Expectations) -> list[tuple[str, Decision]]:
    return [(project.name, decision) for project in expectations.projects for decision in project.decisions]


def _turns(path: Path) -> tuple[list[str], str]:
    """The user's typed turns, and every text of the session (turns, answers, commands, outputs)."""
    typed: list[str] = []
    texts: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        payload = record.get("payload", {})
        if record.get("type") == "event_msg" and payload.get("type") == "user_message":
            typed.append(payload["message"])
        elif record.get("type") == "response_item":
            if payload.get("type") == "message" and payload.get("role") in ("user", "assistant"):
                texts += [part.get("text", "") for part in payload["content"]]
            elif payload.get("type") in ("function_call_output", "function_call"):
                texts.append(payload.get("output") or payload.get("arguments", ""))
        elif record.get("type") in ("user", "assistant"):
            content = record["message"]["content"]
            if isinstance(content, str):
                if record["type"] == "user" and not record.get("isMeta"):
                    typed.append(content)
                texts.append(content)
                continue
            for block in content:
                texts.append(json.dumps(block.get("input")) if block.get("type") == "tool_use" else str(block.get("text") or block.get("content") or ""))
    return typed, "\n".join([*typed, *texts])


def _stem(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if len(w) >= 3 and w not in STOPWORDS}


def _shared(paraphrase: str, said: str) -> set[str]:
    """The paraphrase's content words that are, or share a stem or a 5-letter prefix with, a content word of ``said``."""
    theirs = _content_words(said)
    return {
        mine for mine in _content_words(paraphrase)
        for word in theirs
        if mine == word or _stem(mine) == _stem(word) or (len(mine) >= 5 and len(word) >= 5 and mine[:5] == word[:5])
    }


def _holds_all(text: str, terms: tuple[str, ...]) -> bool:
    folded = text.casefold()
    return all(term.casefold() in folded for term in terms)


def test_the_expectations_load_with_enough_current_and_amended_decisions() -> None:
    decisions = [d for _, d in _decisions(_expectations())]
    ids = {d.id for d in decisions}
    assert len(ids) == len(decisions), "decision ids are unique"
    replaced = {d.replaces for d in decisions if d.replaces}
    current = [d for d in decisions if d.id not in replaced]
    assert len(current) >= 30
    amendments = [d for d in decisions if d.replaces]
    assert len(amendments) >= 5
    assert replaced <= ids, f"replaces names no decision: {sorted(replaced - ids)}"


def test_amendments_amend_an_older_decision_of_their_own_project_and_hold_different_terms() -> None:
    expectations = _expectations()
    for project in expectations.projects:
        by_id = {d.id: d for d in project.decisions}
        for new in (d for d in project.decisions if d.replaces):
            assert new.replaces in by_id, f"{new.id} amends {new.replaces}, not a decision of {project.name}"
            old = by_id[new.replaces]
            old_text, new_text = _turns(CORPUS / old.source)[1], _turns(CORPUS / new.source)[1]
            assert json.loads((CORPUS / old.source).read_text().splitlines()[0]) != json.loads((CORPUS / new.source).read_text().splitlines()[0])
            assert not _holds_all(new_text, old.terms), f"{new.id}'s chat states the decision it amends ({old.terms})"
            assert not _holds_all(old_text, new.terms), f"{old.id}'s chat already states its amendment ({new.terms})"
            assert _first_time(CORPUS / old.source) < _first_time(CORPUS / new.source), f"{new.id} is not later than {old.id}"


def _first_time(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "timestamp" in record and record.get("type") != "file-history-snapshot":
            return str(record["timestamp"])
    raise AssertionError(f"{path} has no timestamp")


def test_every_decision_names_its_session_and_the_users_words_are_in_it() -> None:
    for project, decision in _decisions(_expectations()):
        path = CORPUS / decision.source
        assert decision.source and path.is_file(), f"{project}/{decision.id}: from {decision.source!r} is not a file of the corpus"
        typed, text = _turns(path)
        assert any(decision.said in turn for turn in typed), f"{decision.id}: said is not verbatim in a user turn of {decision.source}"
        missing = [term for term in decision.terms if term.casefold() not in text.casefold()]
        assert not missing, f"{decision.id}: terms {missing} are not in {decision.source}"


def test_no_question_gives_the_answer_away_and_no_paraphrase_shares_a_word_with_the_users() -> None:
    wrong = []
    for _, decision in _decisions(_expectations()):
        assert decision.question and decision.paraphrase, decision.id
        if _holds_all(decision.question, decision.terms):
            wrong.append(f"{decision.id}: the question holds every term {decision.terms}")
        if shared := _shared(decision.paraphrase, decision.said):
            wrong.append(f"{decision.id}: the paraphrase shares {sorted(shared)} with what the user said")
    assert not wrong, "\n".join(wrong)


def test_decoys_outnumber_decisions_three_to_one_and_none_states_a_decision() -> None:
    expectations = _expectations()
    named = {d.source for _, d in _decisions(expectations)}
    files = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.jsonl"))
    decoys = [f for f in files if f not in named]
    assert len(decoys) >= 3 * len(named)
    for project in expectations.projects:
        own = [f for f in decoys if _cwd(CORPUS / f) == project.cwd]
        assert own, f"{project.name} has no decoys"
        for decoy in own:
            text = _turns(CORPUS / decoy)[1]
            stating = [d.id for d in project.decisions if _holds_all(text, d.terms)]
            assert not stating, f"decoy {decoy} states {stating}"


def _cwd(path: Path) -> str:
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    if first.get("type") == "session_meta":
        return str(first["payload"]["cwd"])
    return next(str(json.loads(line)["cwd"]) for line in path.read_text(encoding="utf-8").splitlines() if '"cwd"' in line)


def test_both_agents_and_three_months() -> None:
    files = list(CORPUS.rglob("*.jsonl"))
    codex = [f for f in files if json.loads(f.read_text().splitlines()[0]).get("type") == "session_meta"]
    assert 0.4 <= len(codex) / len(files) <= 0.6
    months = {_first_time(f)[:7] for f in files}
    assert months == {"2026-09", "2026-10", "2026-11"}


@pytest.mark.parametrize(("paraphrase", "said", "shares"), [
    ("how many times do we try again?", "retries are capped at 12", False),
    ("what's the retry limit?", "retries are capped at 12", True),  # a stem
    ("when do exports stop?", "the export cap is 5,000 rows", True),
    ("how long do we keep the data?", "keep 30 days", True),
    ("which kinds of cash?", "accepted currencies are EUR and USD", False),
    ("which currency?", "accepted currencies are EUR and USD", True),  # a 5-letter prefix
])
def test_the_paraphrase_check_sees_shared_words_stems_and_prefixes(paraphrase: str, said: str, shares: bool) -> None:
    assert bool(_shared(paraphrase, said)) is shares
