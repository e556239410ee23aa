"""Evaluate: run the whole pipeline over an eval corpus in a fresh store and score what each project gets.

The sessions are replayed day by day, as they would have arrived: on each
day of the corpus the clock stands at the next morning (once the idle window
has passed), and the user's own pipeline (``services.pipeline.run_pipeline``:
the same models, fallback, notes files and limits as ``run``) ingests that
day's session files, extracts every session idle by then and consolidates. So a later session meets the memory the earlier ones left, and
a command it replaces is invalidated as it would be in use. Then the
corpus's values are forgotten, and each project's next session is served
(context and searches, as an agent reads them) and scored
(``domain.evaluation.score``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from mnemolog.domain.bm25 import BM25
from mnemolog.domain.evaluation import (
    DecisionSearches,
    Expectations,
    ProjectExpectations,
    Score,
    Served,
    ServedItem,
    score,
    unwanted_queries,
)
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.ports import Progress, SessionUnreadable, no_progress
from mnemolog.domain.recall import RecallReads
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.services.pipeline import (
    PipelinePolicy,
    PipelinePorts,
    model_name,
    run_pipeline,
)
from mnemolog.domain.services.read import Tokenizer, context, search
from mnemolog.domain.services.recall import recall
from mnemolog.domain.services.unit_of_work import UnitOfWork

CONTEXT_BUDGET = 3000


@dataclass(frozen=True)
class EvalCorpus:
    """A corpus made ready to run: its session files and each project's scope key in this store."""

    expectations: Expectations
    files: tuple[Path, ...]
    scopes: Mapping[str, str]  # project name -> scope key


@dataclass
class EvalReport:
    """What one eval run did and how it scored."""

    score: Score
    extract_model: str
    consolidate_model: str
    sessions: int = 0
    days: int = 0
    extracted: int = 0
    nothing: int = 0
    extract_failed: int = 0
    fallbacks: int = 0  # days whose plan the offline consolidator made (the model's was unusable)
    consolidations_failed: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when every threshold holds, every extraction answered and every consolidation completed."""
        return not (self.score.failures() or self.consolidations_failed or self.extract_failed or self.unreadable)

    def as_dict(self) -> dict[str, Any]:
        """Every metric, every miss (with the session it came from), and what the run did."""
        scored = self.score.as_dict()
        return {
            **scored,
            "passed": self.passed,
            "failed": [
                *scored["failed"],
                *(f"consolidation failed: {d}" for d in self.consolidations_failed),
                *([f"{self.extract_failed} extractions failed (the model did not answer)"] if self.extract_failed else []),
                *(f"unreadable session file: {u}" for u in self.unreadable),
            ],
            "models": {"extract": self.extract_model, "consolidate": self.consolidate_model},
            "run": {
                "sessions": self.sessions,
                "days": self.days,
                "extracted": self.extracted,
                "nothing": self.nothing,
                "extract_failed": self.extract_failed,
                "fallbacks": self.fallbacks,
                "unreadable": self.unreadable,
            },
        }


def _day(moment: datetime | None) -> date | None:
    return moment.astimezone(UTC).date() if moment is not None else None


def evaluate(
    uow: UnitOfWork,
    corpus: EvalCorpus,
    *,
    ports: PipelinePorts,
    policy: PipelinePolicy,
    tokenizer: Tokenizer,
    instructions: Callable[[str], str],
    set_clock: Callable[[datetime], None],
    history: Callable[[], RecallReads],
    budget: int = CONTEXT_BUDGET,
    progress: Progress = no_progress,
) -> EvalReport:
    """Replay the corpus day by day into ``uow`` (a fresh store), forget its values, serve and score each project.

    ``ports`` and ``policy`` are the user's pipeline's, as ``run`` is given
    them (with ``--all``: a corpus is a first import of its history).
    ``set_clock`` moves the store's clock (the replay's "now"); ``instructions``
    gives the read-path prompt for a project scope, as ``context`` prints it;
    ``history`` the recall reads (excerpts, meaning) that ``search`` uses.
    """
    report = EvalReport(Score(), model_name(ports.extractor), model_name(ports.consolidator))
    by_day: dict[date, list[Path]] = {}
    for path in corpus.files:
        try:
            meta = ports.source.read(path).meta
        except SessionUnreadable as error:
            report.unreadable.append(str(error))
            continue
        day = _day(meta.updated_at or meta.started_at) or date(1970, 1, 1)
        by_day.setdefault(day, []).append(path)
    report.sessions = sum(len(paths) for paths in by_day.values())
    report.days = len(by_day)
    for done, day in enumerate(sorted(by_day)):
        progress(done, len(by_day), day.isoformat())
        set_clock(datetime.combine(day + timedelta(days=1), time(), UTC) + policy.eligibility.idle)
        ran = run_pipeline(uow, ports, policy, sorted(by_day[day]))
        extracted = ran.extract.as_dict()
        report.extracted += extracted["extracted"]
        report.nothing += extracted["nothing"]
        report.extract_failed += extracted["failed"] + extracted["gave_up"]
        if ran.consolidate.fallback:
            report.fallbacks += 1
        if ran.consolidate.status != "completed":
            report.consolidations_failed.append(f"{day.isoformat()}: {ran.consolidate.detail}")
    progress(len(by_day), len(by_day), "")
    for forgotten in corpus.expectations.forget:
        scope = corpus.scopes[forgotten.project] if forgotten.project else GLOBAL_SCOPE
        forget_value(uow, forgotten.value, scope, "eval corpus: the user forgot it")
    report.score = score(corpus.expectations, _serve(uow, corpus, tokenizer, instructions, budget, history()))
    return report


def _serve(
    uow: UnitOfWork, corpus: EvalCorpus, tokenizer: Tokenizer, instructions: Callable[[str], str], budget: int, history: RecallReads
) -> dict[str, Served]:
    """What each project's next session is given: its context, a search per question and unwanted fact, and per decision.

    Questions and decisions are searched as ``search`` does (items and
    history); an unwanted fact is looked for among items only (history is a
    record of what was said, not memory asserting it).
    """
    reads, matcher = uow.reads(), uow.matcher()
    served: dict[str, Served] = {}
    queries = unwanted_queries(corpus.expectations)

    def described(item_id: Any, project: str) -> ServedItem | None:
        row = reads.item(item_id, project)
        if row is None:
            return None
        sessions = tuple(e.native_id for e in reads.evidence_of(row.item_id) if e.scope in (project, GLOBAL_SCOPE))
        steps = row.skill.commands if row.skill is not None else ()  # a skill is served with its steps
        return ServedItem(str(row.item_id), row.kind, row.scope, "\n".join([row.title, row.text, *steps]), sessions)

    for project in corpus.expectations.projects:
        scope = corpus.scopes[project.name]
        given = context(reads, matcher, tokenizer, instructions(scope), scope, budget)
        items = [described(item_id, scope) for item_id in given.item_ids]
        hits: dict[str, tuple[ServedItem, ...]] = {}
        asked = {q.query for q in project.questions}
        for query in queries[project.name]:
            if query in asked:
                found = [_recalled(hit, described, scope) for hit in recall(reads, history, matcher, query, scope, limit=5).hits]
            else:
                found = [described(hit.item.item_id, scope) for hit in search(reads, matcher, query, scope, limit=5)]
            hits[query] = tuple(item for item in found if item is not None)
        decisions = _decisions(uow, history, project, scope) if project.decisions else None
        served[project.name] = Served(tuple(item for item in items if item is not None), hits, decisions)
    return served


def _recalled(hit: Any, described: Callable[[Any, str], ServedItem | None], scope: str) -> ServedItem | None:
    if hit.item is not None:
        return described(hit.item.item_id, scope)
    excerpt = hit.excerpt
    return ServedItem(excerpt.reference(), "excerpt", scope, excerpt.text, (excerpt.native_id,))


def _decisions(uow: UnitOfWork, history: RecallReads, project: ProjectExpectations, scope: str) -> DecisionSearches:
    """The top five texts for each decision's question and paraphrase through ``search``, and through BM25 over the raw chats."""
    from mnemolog.domain.session import Session

    reads, matcher = uow.reads(), uow.matcher()

    def texts(query: str) -> tuple[str, ...]:
        found = recall(reads, history, matcher, query, scope, limit=5).hits
        return tuple(
            "\n".join([h.item.title, h.item.text]) if h.item is not None else h.excerpt.text if h.excerpt is not None else ""
            for h in found
        )

    chats = []
    for state in reads.session_states(scope):
        session: Session | None = uow.app.find(state.session_id)
        if session is None:
            continue
        chats.append("\n".join(item.text for item in session.transcript))
    baseline = BM25(chats)
    return DecisionSearches(
        question={d.id: texts(d.question) for d in project.decisions},
        paraphrase={d.id: texts(d.paraphrase) for d in project.decisions if d.paraphrase},
        baseline={d.id: tuple(chats[i] for i in baseline.top(d.question, 5)) for d in project.decisions},
    )

