"""Event logs built through the domain's own commands, for tests of the store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from mnemolog.domain.application import MnemologApp
from mnemolog.domain.citation import Citation
from mnemolog.domain.consolidation import (
    Consolidation,
    InputDiff,
    Override,
    PhaseTwoLease,
    SelectedInput,
)
from mnemolog.domain.injection import Injection, ServedItem
from mnemolog.domain.memory_item import EditedBy, MemoryItem, Trust
from mnemolog.domain.note import Note
from mnemolog.domain.session import Session, SessionFacts, SessionMode
from mnemolog.domain.tombstone import Tombstone, tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint
from mnemolog.domain.transcript import ItemKind, TranscriptItem

T0 = datetime(2026, 10, 1, 9, 30, tzinfo=UTC)


def facts(native_id: str, content_hash: str = "h1", scope: str = "git:example.com/acme/api", **extra: object) -> SessionFacts:
    """Facts of a made-up Codex session."""
    values: dict[str, object] = {
        "source": "codex",
        "native_id": native_id,
        "path": f"/home/dev/.codex/sessions/rollout-{native_id}.jsonl",
        "cwd": "/home/dev/acme/api",
        "scope": scope,
        "git_branch": "main",
        "git_remote": "git@example.com:acme/api.git",
        "agent_version": "0.125.0",
        "origin": "cli",
        "started_at": T0,
        "updated_at": T0 + timedelta(minutes=20),
        "content_hash": content_hash,
        "line_count": 12,
        "item_count": 3,
        "user_message_count": 1,
        "skipped": {"unknown line type: world_state": 1},
        "redactions": 2,
        "first_user_message": "Fix the flaky retry test in api/client.py",
    }
    values.update(extra)
    return SessionFacts.model_validate(values)


TRANSCRIPT = (
    TranscriptItem(kind=ItemKind.USER, text="Fix the flaky retry test in api/client.py. Always run `make test`.", timestamp=T0),
    TranscriptItem(kind=ItemKind.TOOL_CALL, text="make test", tool="shell", call_id="c1"),
    TranscriptItem(kind=ItemKind.TOOL_OUTPUT, text="1 failed", tool="shell", call_id="c1", is_error=True, exit_code=1),
)


def _matcher_for(value: str) -> TombstoneMatcher:
    digest, width = fingerprint(b"scenario-key", value)
    return TombstoneMatcher(b"scenario-key", [TombstoneRule(tombstone_id_for(digest, "global"), digest, width, "global")])


def every_event(app: MnemologApp) -> dict[str, UUID]:
    """Append at least one event of every type; returns the ids of what it made."""
    now = T0 + timedelta(days=1)
    s1 = Session(facts=facts("019a0000-0000-7000-8000-000000000001"), transcript=TRANSCRIPT)
    s1.update(facts("019a0000-0000-7000-8000-000000000001", content_hash="h2"), TRANSCRIPT[:2])
    s1.assess(True, ())
    s1.claim_extraction("w1", now, timedelta(minutes=5), 3)
    s1.record_failure("HTTP 429", now + timedelta(minutes=1))
    s1.claim_extraction("w1", now + timedelta(minutes=2), timedelta(minutes=5), 3)
    s1.record_extraction(
        rollout_summary="Fixed the retry test.",
        rollout_slug="fix-retry-test",
        raw_memory="---\ndescription: retry test\n---\n### Task 1\nReusable knowledge:\n- run make test",
        model="gpt-5-mini",
        prompt_hash="abc",
        input_tokens=900,
        output_tokens=120,
        plain_input_tokens=4000,
        redactions=0,
    )
    s1.scrub(_matcher_for("flaky retry"))  # Session.Scrubbed: a forgotten value cut out of the stored texts
    uncut = {"first_user_message": "Fix the flaky retry test in api/client.py", "transcript": (), "extraction": None}
    s1.restore(uncut, _matcher_for("nothing here"), UUID(int=1))  # Session.Restored: a lift put the text back
    s2 = Session(facts=facts("019a0000-0000-7000-8000-000000000002"), transcript=TRANSCRIPT)
    s2.change_mode(SessionMode.POLLUTED, "used external context: web search")
    s2.record_nothing("heuristic", "def")
    s2.prune("retention: unused for 30 days")
    s2.delete("forget --session")
    app.save_all(s1, s2)

    lease = PhaseTwoLease()
    run = Consolidation(
        selection=(SelectedInput(session_id=s1.id, content_hash="h2", rank=1),),
        previous_selection=(),
        diff=InputDiff(added=(s1.id,)),
        worker="w1",
        model="heuristic",
    )
    lease.take(run.id, "w1", now, timedelta(minutes=30))
    item = MemoryItem(
        kind="knowledge",
        scope="git:example.com/acme/api",
        task_group="api",
        title="retry test",
        text="Run make test before pushing.",
        keywords=("make", "test"),
        evidence=(s1.id,),
        valid_from=T0,
        consolidation_id=run.id,
        reason="seen in session",
    )
    item.revise(
        title="retry test",
        text="Run `make test` before pushing; it includes the retry suite.",
        keywords=("make", "test", "retry"),
        evidence=(s1.id,),
        valid_from=None,
        consolidation_id=run.id,
        reason="more detail",
    )
    item.review(Trust.ACCEPTED, "dev")
    item.edit("Run `make test` before pushing (the retry suite included).", "retry test", "dev", "clearer")  # Edited
    item.pin("dev")  # Pinned
    item.pin("dev", pinned=False)  # Unpinned
    item.pin("dev")
    old = MemoryItem(
        kind="preference",
        scope="global",
        task_group="",
        title="",
        text="Deploy with deploy.sh",
        keywords=(),
        evidence=(s1.id,),
        valid_from=T0,
        consolidation_id=run.id,
        reason="user said so",
    )
    old.invalidate(now, "replaced by the new pipeline", run.id)
    gone = MemoryItem(
        kind="failure",
        scope="git:example.com/acme/api",
        task_group="api",
        title="",
        text="Timeouts on CI",
        keywords=(),
        evidence=(s2.id,),
        valid_from=None,
        consolidation_id=run.id,
        reason="",
    )
    gone.change_scope("global", "dev", "true everywhere")  # ScopeChanged
    gone.retire("all evidence is gone", run.id, by=EditedBy.CODE)
    note = Note(text="Prefer uv over pip, not poetry", intent="remember", scope="global", source="cli", written_at=now)
    note.scrub(_matcher_for("not poetry"))  # Note.Scrubbed
    note.restore("Prefer uv over pip", _matcher_for("nothing here"), UUID(int=1))  # Note.Restored
    note.mark_applied(run.id)
    run.complete(
        added=3,
        revised=1,
        retired=1,
        invalidated=1,
        overrides=(Override(action="retired", reason="all evidence is gone", item_id=gone.id),),
        model="heuristic",
        prompt_hash="def",
        user_profile="A backend developer who uses poetry.",
        notes_applied=(note.id,),
    )
    run.scrub_profile(_matcher_for("uses poetry"))  # Consolidation.ProfileScrubbed
    lease.release(run.id)
    app.save_all(lease, run, item, old, gone, note)

    failed = Consolidation(selection=(), previous_selection=run.selection, diff=InputDiff(removed=(s1.id,)), worker="w2", model="m")
    dropped = (Override(action="rejected", reason="unknown item handle 'I9'", edit="edit 1: revise I9"),)
    failed.reject_edits(1, 2, dropped, model="m", prompt_hash="abc")  # Consolidation.EditsRejected
    failed.request_repair(2, ("edit 1: revise I9: unknown item handle 'I9'",))  # Consolidation.RepairRequested
    refused = (Override(action="rejected", reason="the edit contains a forgotten value (tombstone)", edit="edit 1: add"),)
    failed.refuse_plan(2, 1, "the edit contains a forgotten value (tombstone)", refused, model="m")  # Consolidation.PlanRefused
    failed.model_failed(3, "m: answer cut off by the output token limit", model="m")  # Consolidation.ModelFailed
    failed.fall_back("no usable edit remained", "heuristic")  # Consolidation.FellBack
    failed.fail("the plan broke 1 rule(s)", dropped)
    citation = Citation(item_ids=(item.id,), session_ids=(s1.id,), citing_session="019b", cited_at=now, source="cli", entries=("MEMORY.md:3-4|note=[used]",))
    tomb = Tombstone(digest="0" * 64, width=2, scope="global", reason="user asked")
    served = Injection(
        session="019b", project="git:example.com/acme/api", surface="hook", tokens=120, served_at=now,
        items=(ServedItem(item_id=item.id, rank=1, trust="accepted", citations=0, updated_at=now, why="accepted; never cited"),),
    )
    tomb.record_suppression("extraction", str(s1.id))
    tomb.lift("mistake")
    tomb.replace("asked again")
    taken_back = Note(text="Use tabs, not spaces", intent="remember", scope="global", source="cli", written_at=now)
    taken_back.withdraw("changed my mind")  # Note.Withdrawn
    erased = _matcher_for("retry suite")  # an erase re-records what survives under new keys
    for survivor in (s1, item, run, note, citation):
        survivor.rerecord(erased)  # Session/MemoryItem/Consolidation/Note/Citation.Rerecorded
    app.save_all(failed, citation, tomb, taken_back, s1, item, run, note, served)
    return {"session": s1.id, "item": item.id, "run": run.id, "tombstone": tomb.id, "note": note.id}


def event_classes() -> set[type]:
    """Every concrete event class of every aggregate."""
    from mnemolog.domain.events import EventSourced

    found: set[type] = set()
    for aggregate in (Session, MemoryItem, Consolidation, PhaseTwoLease, Citation, Tombstone, Note, Injection):
        for name in dir(aggregate):
            candidate = getattr(aggregate, name)
            if (
                isinstance(candidate, type)
                and issubclass(candidate, EventSourced.Event)
                and candidate.__qualname__.startswith(aggregate.__name__ + ".")
                and name not in ("Event", "Created")
            ):
                found.add(candidate)
    return found
