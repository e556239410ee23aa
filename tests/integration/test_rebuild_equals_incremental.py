"""The bulk rebuild projects exactly what the incremental catch-up projects, on both backends.

A log with the life of a real store (sessions extracted, failed and pruned;
consolidations adding, revising, retiring, invalidating items and skills; people editing,
pinning, moving and reviewing them; citations, injections, notes, tombstones,
a forget and an erase) is projected twice: event batch by event batch as a
follower would, in small batches that cut through aggregates, and by
``rebuild`` (pages of the log, rows written per window). Every view table, the
context counts, the order of the search rows and what searches find must be equal.
"""

from __future__ import annotations

import contextlib
import random
from datetime import timedelta
from typing import Any

import pytest
from mnemolog.adapters.store import Store
from mnemolog.domain.citation import Citation
from mnemolog.domain.consolidation import Consolidation, InputDiff, Override, SelectedInput
from mnemolog.domain.injection import Injection, ServedItem
from mnemolog.domain.memory_item import EditedBy, MemoryItem, Trust
from mnemolog.domain.note import Note
from mnemolog.domain.services.erase import erase_value
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.session import ClaimRefused, Session, SessionMode
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.domain.tombstone import Tombstone
from mnemolog.projections import view_store
from mnemolog.projections.schema import create_statements, drop_statements, table
from mnemolog.projections.view_reads import ViewReads
from mnemolog.projections.view_rows import ViewRows
from support.scenarios import T0, TRANSCRIPT, every_event, facts

SCOPES = ("git:example.com/acme/api", "git:example.com/acme/web", "global")
WORDS = ("retry", "deploy", "pnpm", "migrations", "flaky", "timeout", "cache", "docker", "lint", "schema", "token", "queue")
SEARCHED = ("retry", "deploy", "docker", "schema", "queue", "cache", "makefile")  # makefile: only in skills


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + f" {rng.randrange(10_000)}."


def _skill(rng: random.Random, name: str) -> Skill:
    steps = tuple(SkillStep(command=f"make {rng.choice(WORDS)}", action=_text(rng, 3)) for _ in range(rng.randrange(2, 4)))
    return Skill(name=name, steps=steps, relies_on=("make", "Makefile"))


def _realistic_log(store: Store, rng: random.Random) -> None:
    """Many saves, so one aggregate's events lie far apart in the log (and across batches)."""
    app = store.app
    every_event(app)
    sessions: list[Session] = []
    items: list[MemoryItem] = []
    notes: list[Note] = []
    tombstones: list[Tombstone] = []
    for day in range(14):
        now = T0 + timedelta(days=day)
        made = []
        for n in range(3):
            native = f"019c{day:04d}-{n:04d}-7000-8000-000000000000"
            s = Session(facts=facts(native, scope=rng.choice(SCOPES[:2]), first_user_message=_text(rng, 6)), transcript=TRANSCRIPT)
            s.assess(True, ())
            s.claim_extraction("w1", now, timedelta(minutes=5), 3)
            fate = rng.random()
            if fate < 0.6:
                s.record_extraction(
                    rollout_summary=_text(rng, 5), rollout_slug=f"slug-{day}-{n}", raw_memory=_text(rng, 12),
                    model="gpt-5-mini", prompt_hash="p", input_tokens=900, output_tokens=100, plain_input_tokens=3000, redactions=0,
                )
            elif fate < 0.8:
                s.record_failure("HTTP 429", now + timedelta(hours=1))
            else:
                s.record_nothing("heuristic", "p")
            made.append(s)
        for s in rng.sample(sessions, min(2, len(sessions))):  # older sessions change later in the log
            action = rng.choice(("update", "mode", "prune", "assess", "retry"))
            if action == "update":
                s.update(facts(s.facts.native_id, content_hash=f"h{day}", scope=s.facts.scope), TRANSCRIPT[:2])
            elif action == "mode":
                s.change_mode(SessionMode.DISABLED, "user asked")
            elif action == "prune":
                s.prune("retention")
            elif action == "assess":
                s.assess(False, ("too short",))
            else:
                with contextlib.suppress(ClaimRefused):
                    s.claim_extraction("w2", now + timedelta(hours=2), timedelta(minutes=5), 3, retry_failed=True)
            made.append(s)
        sessions.extend(x for x in made if x not in sessions)
        run = Consolidation(
            selection=tuple(SelectedInput(session_id=s.id, content_hash="h", rank=i) for i, s in enumerate(made[:3])),
            previous_selection=(), diff=InputDiff(added=tuple(s.id for s in made[:3])), worker="w1", model="heuristic",
        )
        changed: list[Any] = [run, *made]
        for _ in range(rng.randrange(3, 7)):
            item = MemoryItem(
                kind=rng.choice(("knowledge", "preference", "failure", "task")), scope=rng.choice(SCOPES),
                task_group=rng.choice(("api", "", "ci")), title=_text(rng, 2), text=_text(rng, 10),
                keywords=tuple(rng.sample(WORDS, 2)), evidence=tuple(s.id for s in rng.sample(made[:3], 2)),
                valid_from=now, consolidation_id=run.id, reason="seen",
            )
            items.append(item)
            changed.append(item)
        if day % 2 == 0:  # a skill learnt from the day's sessions
            skill = MemoryItem(
                kind="skill", scope=rng.choice(SCOPES[:2]), task_group="ci", title=f"run-{day}", text=_text(rng, 6),
                keywords=("skill",), evidence=(made[0].id,), valid_from=now, consolidation_id=run.id, reason="seen twice",
                skill=_skill(rng, f"run-checks-{day}"),
            )
            items.append(skill)
            changed.append(skill)
        for item in rng.sample(items, min(6, len(items))):  # the model and people change older items
            action = rng.choice(("revise", "retire", "invalidate", "edit", "pin", "unpin", "scope", "review", "review"))
            if action == "revise" and item.is_active:
                skill = getattr(item, "skill", None)
                new_skill = _skill(rng, skill.name) if skill is not None and rng.random() < 0.5 else None  # else it keeps its steps
                item.revise(title=item.title, text=_text(rng, 9), keywords=tuple(rng.sample(WORDS, 3)),
                            evidence=(rng.choice(sessions).id,), valid_from=None, consolidation_id=run.id, reason="more",
                            skill=new_skill)
            elif action == "retire":
                item.retire("evidence gone", run.id, by=EditedBy.CODE)
            elif action == "invalidate":
                item.invalidate(now, "replaced", run.id)
            elif action == "edit":
                item.edit(_text(rng, 8), item.title, "dev", "clearer")
            elif action in ("pin", "unpin"):
                item.pin("dev", pinned=action == "pin")
            elif action == "scope":
                item.change_scope(rng.choice(SCOPES), "dev", "moved")
            else:
                item.review(rng.choice((Trust.ACCEPTED, Trust.DOUBTED, Trust.REJECTED)), "dev")
            changed.append(item)
        note = Note(text=_text(rng, 5), intent="remember", scope=rng.choice(SCOPES), source="cli", written_at=now)
        notes.append(note)
        changed.append(note)
        if len(notes) > 2:
            old = rng.choice(notes[:-1])
            old.mark_applied(run.id) if rng.random() < 0.5 else old.withdraw("changed my mind")
            changed.append(old)
        run.complete(added=3, revised=1, retired=1, invalidated=0, overrides=(Override(action="retired", reason="gone", item_id=items[0].id),),
                     model="heuristic", prompt_hash="p", user_profile=_text(rng, 6), notes_applied=())
        cited = rng.sample(items, min(4, len(items)))
        changed.append(Citation(item_ids=tuple(i.id for i in cited), session_ids=tuple(s.id for s in made[:2]),
                                citing_session=f"019d{day}", cited_at=now, source="cli", entries=()))
        changed.append(Injection(session=f"019d{day}", project=SCOPES[0], surface=rng.choice(("hook", "mcp")), tokens=300, served_at=now,
                                 items=tuple(ServedItem(item_id=i.id, rank=r, trust="proposed", citations=0, updated_at=now, why="rank")
                                             for r, i in enumerate(rng.sample(items, min(3, len(items)))))))
        if day % 4 == 1:
            tomb = Tombstone(digest=f"{day:064d}", width=2, scope=rng.choice(SCOPES), reason="user asked")
            tomb.record_suppression("extraction", str(made[0].id))
            tombstones.append(tomb)
            changed.append(tomb)
        if tombstones and day % 5 == 3:
            tombstones[0].lift("mistake") if rng.random() < 0.5 else tombstones[0].replace("again")
            changed.append(tombstones[0])
        app.save_all(*{id(x): x for x in changed}.values())
        if day in (6, 10):
            if day == 6:
                forget_value(store, "flaky", "global", "user asked")  # retires, scrubs, records suppressions
            else:
                erase_value(store, "pnpm", store.keys, store)  # re-records survivors under new keys, rebuilds
            for held in (sessions, items, notes, tombstones):  # what the service saved, read back
                held[:] = [app.repository.get(x.id) for x in held]


def _empty_views(store: Store) -> None:
    """The view tables as a first open leaves them: empty, with indexes and search triggers."""
    view: Any = store.view
    with view.datastore.transaction(commit=True) as cursor:
        for statement in drop_statements():
            cursor.execute(statement)
        mark = "?" if view.dialect == "sqlite" else "%s"
        cursor.execute(f"DELETE FROM {view._tracking_table()} WHERE application_name = {mark}", (store.app.name,))
        for statement in create_statements(view.dialect):
            cursor.execute(statement)


def _projected(store: Store) -> dict[str, Any]:
    reads = ViewReads(store.view)
    out: dict[str, Any] = dict(reads.dump())
    out["context_tokens"] = reads.query(f"SELECT id, context_tokens FROM {table('items')} WHERE status = 'active' ORDER BY id")
    out["search_order"] = [r["item_id"] for r in reads.query(f"SELECT item_id FROM {table('search_rows')} ORDER BY id")]
    out["found"] = {w: sorted(str(h.item.item_id) for h in reads.search(w, None, None, 200)) for w in SEARCHED}
    out["position"] = store.view.position(store.app.name)
    return out


def test_rebuild_projects_what_the_incremental_catch_up_projects(store_factory, monkeypatch: pytest.MonkeyPatch) -> None:
    store = store_factory()
    _realistic_log(store, random.Random(15))
    _empty_views(store)
    view_store.catch_up(store.app, store.view, batch_size=7)  # small batches: an aggregate's events span many
    incremental = _projected(store)
    assert incremental["items"] and incremental["context_tokens"] and all(incremental["found"].values())
    assert incremental["position"] == store.app.max_notification_id()
    listed = {
        r["scope"]: r["n"]
        for r in ViewReads(store.view).query(
            f"SELECT scope, COUNT(*) AS n FROM {table('items')} WHERE status = 'active' AND context_rank < 3 GROUP BY scope"
        )
    }
    kept = {r["scope"]: r["n"] for r in ViewReads(store.view).query(f"SELECT scope, n FROM {table('context_counts')}")}
    assert len(listed) > 1 and kept == listed  # the per-scope counts context reads equal a COUNT of the items

    assert store.rebuild() == store.app.max_notification_id()
    assert _projected(store) == incremental

    monkeypatch.setattr(view_store, "LOAD_PAGE", 11)  # tiny pages and windows: rows written and read back often
    monkeypatch.setattr(view_store, "LOAD_WINDOW", 40)
    held: list[int] = []
    flush = ViewRows.flush

    def counting(rows: ViewRows) -> None:
        held.append(len(rows))
        flush(rows)

    monkeypatch.setattr(ViewRows, "flush", counting)
    store.rebuild()
    assert _projected(store) == incremental
    assert len(held) > 10 and max(held) < 40 + 11 * 12  # streamed: never more than a window and a page of rows held
