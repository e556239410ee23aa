"""Memory quality, measured: what an eval corpus expects, and how what was served scores against it.

An eval corpus (``docs/eval.md``) names, per project, the facts that must
reach that project's context, the facts that must not (distractors, facts a
later session made stale, forgotten values, other projects' facts), and
search questions whose answer must be in the top five. This module holds
those expectations and the pure scoring: no store, no model, no files.

A fact is a set of terms; a served item states it when its text holds every
term (case-insensitive) and, when the fact says so, it is of the right kind
and user-wide (global) or project-scoped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

GLOBAL = "global"
TOP = 5  # questions count as answered when the fact is in the top five hits

Why = Literal["distractor", "stale", "forgotten", "other_project"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Fact(_Strict):
    """A fact memory should (or should not) hold, as the terms that state it."""

    id: str
    terms: tuple[str, ...] = Field(min_length=1)
    kind: str | None = None  # preference | knowledge | failure | task | skill
    user_wide: bool | None = None  # True: must be global; False: must be the project's own
    source: str = Field(default="", alias="from")  # the session file that teaches it (for reports)
    note: str = ""  # what the corpus's author wants a reader to know about it

    def stated_by(self, item: ServedItem) -> bool:
        """Whether ``item`` states this fact (every term, and kind and scope when given)."""
        text = item.text.casefold()
        if not all(term.casefold() in text for term in self.terms):
            return False
        if self.kind is not None and item.kind != self.kind:
            return False
        if self.user_wide is True and item.scope != GLOBAL:
            return False
        return not (self.user_wide is False and item.scope == GLOBAL)


class Unwanted(_Strict):
    """A fact that must not be served to a project, and why."""

    id: str
    terms: tuple[str, ...] = Field(min_length=1)
    why: Why = "distractor"
    source: str = Field(default="", alias="from")  # the session file it comes from
    note: str = ""

    def stated_by(self, item: ServedItem) -> bool:
        """Whether ``item`` states it (every term, case-insensitive)."""
        text = item.text.casefold()
        return all(term.casefold() in text for term in self.terms)


class Question(_Strict):
    """A search a future session would make, and the must-fact (by id) that answers it."""

    query: str
    fact: str


class Decision(_Strict):
    """A decision made in conversation, and what a later session asks when it needs it.

    A search hit states the decision when its text holds every term (any
    case). ``said`` is the user's words that make it, as they are in the
    session file; ``question`` is what a later session starts from (a bug
    report or a task that does not name the decision); ``paraphrase`` asks for
    it sharing no content word with ``said``. A decision that ``replaces``
    another amends it: the old one is stale from then on.
    """

    id: str
    terms: tuple[str, ...] = Field(min_length=1)
    said: str
    question: str
    paraphrase: str = ""
    replaces: str | None = None  # the id of the decision this one amends
    source: str = Field(default="", alias="from")  # the session file it is made in
    note: str = ""

    def stated_by(self, text: str) -> bool:
        """Whether a hit's ``text`` states this decision (every term, case-insensitive)."""
        folded = text.casefold()
        return all(term.casefold() in folded for term in self.terms)


class ProjectExpectations(_Strict):
    """One project of the corpus: the folder its sessions ran in, its remote, what it must and must not get."""

    name: str
    remote: str
    cwd: str
    must: tuple[Fact, ...] = ()
    must_not: tuple[Unwanted, ...] = ()
    questions: tuple[Question, ...] = ()
    decisions: tuple[Decision, ...] = ()


class Forget(_Strict):
    """A value the user forgets after the sessions (``forget VALUE [--project P]``)."""

    value: str
    project: str | None = None  # a project name of the corpus; None: global


class Thresholds(_Strict):
    """Where the eval fails."""

    must_recall: float = 0.9
    question_recall_at_5: float = 0.9
    max_distractors: int = 0
    max_stale: int = 0
    max_leaks: int = 0
    decision_recall_at_5: float = 0.9  # current decisions whose hit is in the top five for their question
    paraphrase_recall_at_5: float = 0.0  # the same for the paraphrases (checked only when a corpus sets it)
    max_stale_above_current: int = 0  # amended decisions whose old hit ranks above the current one


class Expectations(_Strict):
    """The whole expectations file of a corpus."""

    thresholds: Thresholds = Thresholds()
    user_wide: tuple[Fact, ...] = ()  # facts every project's context must carry, as global items
    projects: tuple[ProjectExpectations, ...] = Field(min_length=1)
    forget: tuple[Forget, ...] = ()

    def sources(self) -> list[str]:
        """Every session file the expectations name in ``from``."""
        facts: list[Fact | Unwanted] = list(self.user_wide)
        for project in self.projects:
            facts += [*project.must, *project.must_not]
        decided = [d.source for p in self.projects for d in p.decisions]
        return sorted({f.source for f in facts if f.source} | {s for s in decided if s})

    def project(self, name: str) -> ProjectExpectations:
        """The project called ``name``; KeyError when the corpus has none."""
        for project in self.projects:
            if project.name == name:
                return project
        raise KeyError(name)


@dataclass(frozen=True)
class ServedItem:
    """A memory item as a project's session was given it (context or a search hit)."""

    item_id: str
    kind: str
    scope: str
    text: str  # title and text
    sessions: tuple[str, ...] = ()  # native ids of its evidence sessions


@dataclass(frozen=True)
class DecisionSearches:
    """For each decision (by id): the texts of the top hits for its question and its paraphrase, and BM25's over the raw chats."""

    question: Mapping[str, tuple[str, ...]]
    paraphrase: Mapping[str, tuple[str, ...]]
    baseline: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Served:
    """What one project's next session was given: its context, and the hits of each search."""

    context: tuple[ServedItem, ...]
    searches: Mapping[str, tuple[ServedItem, ...]]  # query -> hits, best first
    decisions: DecisionSearches | None = None


@dataclass
class Miss:
    """One thing that went wrong, with where it came from."""

    project: str
    type: str  # must | question | distractor | stale | forgotten | other_project | leak
    fact: str
    terms: tuple[str, ...]
    source: str = ""  # the session file that should have taught it (must, question)
    item: str | None = None  # the item served (unwanted facts, leaks)
    sessions: tuple[str, ...] = ()  # that item's evidence sessions
    query: str | None = None
    rank: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "project": self.project,
            "type": self.type,
            "fact": self.fact,
            "terms": list(self.terms),
            "from": self.source,
            "item": self.item,
            "sessions": list(self.sessions),
            "query": self.query,
            "rank": self.rank,
        }


@dataclass
class ProjectScore:
    """The metrics of one project."""

    must_found: int = 0
    must_total: int = 0
    questions_found: int = 0
    questions_total: int = 0
    reciprocal_ranks: float = 0.0
    distractors: int = 0
    stale: int = 0
    leaks: int = 0
    served: int = 0
    decisions_found: int = 0
    decisions_total: int = 0
    paraphrases_found: int = 0
    paraphrases_total: int = 0
    baseline_found: int = 0  # BM25 over the raw chats, the same questions
    stale_above_current: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "decision_recall_at_5": _ratio(self.decisions_found, self.decisions_total),
            "decisions": self.decisions_total,
            "paraphrase_recall_at_5": _ratio(self.paraphrases_found, self.paraphrases_total),
            "paraphrases": self.paraphrases_total,
            "bm25_decision_recall_at_5": _ratio(self.baseline_found, self.decisions_total),
            "stale_above_current": self.stale_above_current,
            "must_recall": _ratio(self.must_found, self.must_total),
            "must_found": self.must_found,
            "must_total": self.must_total,
            "question_recall_at_5": _ratio(self.questions_found, self.questions_total),
            "mrr": _ratio(self.reciprocal_ranks, self.questions_total),
            "questions": self.questions_total,
            "distractors": self.distractors,
            "stale_served": self.stale,
            "leaks": self.leaks,
            "items_in_context": self.served,
        }


def _ratio(found: float, total: int) -> float:
    return round(found / total, 4) if total else 1.0


@dataclass
class Score:
    """The whole corpus: totals, per project, every miss, and the thresholds that failed."""

    projects: dict[str, ProjectScore] = field(default_factory=dict)
    misses: list[Miss] = field(default_factory=list)
    thresholds: Thresholds = field(default_factory=Thresholds)

    def total(self) -> ProjectScore:
        """The sums over every project."""
        total = ProjectScore()
        for score in self.projects.values():
            for name in vars(total):
                setattr(total, name, getattr(total, name) + getattr(score, name))
        return total

    def failures(self) -> list[str]:
        """One sentence per threshold the corpus missed (empty: it passed)."""
        total, limits, failed = self.total().as_dict(), self.thresholds, []
        if total["must_recall"] < limits.must_recall:
            failed.append(f"must-fact recall {total['must_recall']:.2f} is below {limits.must_recall:.2f}")
        if total["question_recall_at_5"] < limits.question_recall_at_5:
            failed.append(
                f"question recall@5 {total['question_recall_at_5']:.2f} is below {limits.question_recall_at_5:.2f}"
            )
        if total["decisions"]:
            recall, bm25 = total["decision_recall_at_5"], total["bm25_decision_recall_at_5"]
            if recall < limits.decision_recall_at_5:
                failed.append(f"decision recall@5 {recall:.2f} is below {limits.decision_recall_at_5:.2f}")
            if recall < bm25:
                failed.append(f"decision recall@5 {recall:.2f} is below BM25 over the raw chats ({bm25:.2f})")
        if total["paraphrases"] and total["paraphrase_recall_at_5"] < limits.paraphrase_recall_at_5:
            failed.append(f"paraphrase recall@5 {total['paraphrase_recall_at_5']:.2f} is below {limits.paraphrase_recall_at_5:.2f}")
        for key, limit, label in (
            ("stale_above_current", limits.max_stale_above_current, "amended decisions ranked below the decision they replace"),
            ("distractors", limits.max_distractors, "distractors served"),
            ("stale_served", limits.max_stale, "stale facts served as current"),
            ("leaks", limits.max_leaks, "leaks across projects"),
        ):
            if total[key] > limit:
                failed.append(f"{total[key]} {label} (at most {limit})")
        return failed

    def as_dict(self) -> dict[str, Any]:
        """Every metric, per project and in total, every miss, and the verdict."""
        failed = self.failures()
        return {
            "passed": not failed,
            "failed": failed,
            "metrics": self.total().as_dict(),
            "thresholds": self.thresholds.model_dump(),
            "projects": {name: score.as_dict() for name, score in self.projects.items()},
            "misses": [miss.as_dict() for miss in self.misses],
        }


def _first(fact: Fact | Unwanted, items: Sequence[ServedItem]) -> tuple[int, ServedItem] | None:
    return next(((rank, item) for rank, item in enumerate(items, start=1) if fact.stated_by(item)), None)


def unwanted_queries(expectations: Expectations) -> dict[str, list[str]]:
    """Per project, the searches the scoring needs: the questions, and each unwanted fact's terms."""
    queries: dict[str, list[str]] = {}
    for project in expectations.projects:
        wanted = [q.query for q in project.questions] + [" ".join(u.terms) for u in project.must_not]
        queries[project.name] = list(dict.fromkeys(wanted))
    return queries


def score(expectations: Expectations, served: Mapping[str, Served]) -> Score:
    """Score what each project was served against the corpus's expectations.

    - must facts (the project's, and the user-wide ones): found in the context;
    - questions: the rank of the first hit stating the fact, in the top five;
    - unwanted facts: served in the context or as a hit of a search for
      their own terms (a current item: a stale one served as current);
    - leaks: another project's own facts (any must fact not marked
      ``user_wide``) served to this one, in its context.
    """
    result = Score(thresholds=expectations.thresholds)
    for project in expectations.projects:
        got = served[project.name]
        tally = ProjectScore(served=len(got.context))
        result.projects[project.name] = tally
        facts = {fact.id: fact for fact in (*project.must, *expectations.user_wide)}
        for fact in facts.values():
            tally.must_total += 1
            if _first(fact, got.context) is not None:
                tally.must_found += 1
            else:
                result.misses.append(Miss(project.name, "must", fact.id, fact.terms, fact.source))
        for question in project.questions:
            fact = facts[question.fact]
            tally.questions_total += 1
            hit = _first(fact, got.searches.get(question.query, ())[:TOP])
            if hit is None:
                result.misses.append(Miss(project.name, "question", fact.id, fact.terms, fact.source, query=question.query))
                continue
            tally.questions_found += 1
            tally.reciprocal_ranks += 1 / hit[0]
        for unwanted in project.must_not:
            pool = (*got.context, *got.searches.get(" ".join(unwanted.terms), ()))
            found = _first(unwanted, pool)
            if found is None:
                continue
            item = found[1]
            if unwanted.why == "stale":
                tally.stale += 1
            elif unwanted.why == "other_project":
                tally.leaks += 1
            else:
                tally.distractors += 1
            result.misses.append(
                Miss(project.name, unwanted.why, unwanted.id, unwanted.terms, unwanted.source, item.item_id, item.sessions)
            )
        if got.decisions is not None:
            _score_decisions(project, got.decisions, tally, result.misses)
        for other in expectations.projects:
            if other.name == project.name:
                continue
            for fact in other.must:
                if fact.user_wide is True:
                    continue
                found = _first(fact, got.context)
                if found is not None:
                    tally.leaks += 1
                    item = found[1]
                    result.misses.append(
                        Miss(project.name, "leak", fact.id, fact.terms, fact.source, item.item_id, item.sessions)
                    )
    return result


def _rank(decision: Decision, texts: Sequence[str], unless: Decision | None = None) -> int | None:
    """The rank of the first text stating ``decision`` (and not ``unless``), in the top five."""
    for rank, text in enumerate(texts[:TOP], start=1):
        if decision.stated_by(text) and not (unless is not None and unless.stated_by(text)):
            return rank
    return None


def _score_decisions(project: ProjectExpectations, searched: DecisionSearches, tally: ProjectScore, misses: list[Miss]) -> None:
    """Decision recall@5 (question and paraphrase), BM25's on the same questions, and amended decisions ranked below the old one."""
    by_id = {d.id: d for d in project.decisions}
    replaced = {d.replaces for d in project.decisions if d.replaces}
    for decision in project.decisions:
        if decision.id not in replaced:
            tally.decisions_total += 1
            if _rank(decision, searched.question.get(decision.id, ())) is not None:
                tally.decisions_found += 1
            else:
                misses.append(Miss(project.name, "decision", decision.id, decision.terms, decision.source, query=decision.question))
            if _rank(decision, searched.baseline.get(decision.id, ())) is not None:
                tally.baseline_found += 1
            if decision.paraphrase:
                tally.paraphrases_total += 1
                if _rank(decision, searched.paraphrase.get(decision.id, ())) is not None:
                    tally.paraphrases_found += 1
                else:
                    misses.append(Miss(project.name, "paraphrase", decision.id, decision.terms, decision.source, query=decision.paraphrase))
        old = by_id.get(decision.replaces or "")
        if old is None:
            continue
        hits = searched.question.get(decision.id, ())
        current, stale = _rank(decision, hits), _rank(old, hits, unless=decision)
        if stale is not None and (current is None or stale < current):
            tally.stale_above_current += 1
            misses.append(Miss(project.name, "stale_decision", old.id, old.terms, old.source, query=decision.question, rank=stale))
