"""How each event changes the projection tables.

``apply_event`` is the single place where the log becomes rows; both the
incremental catch-up and a rebuild call it, which is what makes them equal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from mnemolog.domain.citation import Citation
from mnemolog.domain.consolidation import Consolidation, PhaseTwoLease
from mnemolog.domain.injection import Injection
from mnemolog.domain.memory_item import ItemStatus, MemoryItem
from mnemolog.domain.note import Note
from mnemolog.domain.session import Session, SessionFacts
from mnemolog.domain.skill import Skill, skill_texts
from mnemolog.domain.tombstone import Tombstone
from mnemolog.projections.schema import table
from mnemolog.projections.sql import Sql


def iso(value: datetime | None) -> str | None:
    """ISO text for a time (None stays None)."""
    return value.isoformat() if value is not None else None


def js(value: Any) -> str:
    """Stable JSON text."""
    return json.dumps(value, sort_keys=True, default=str)


def _facts_columns(facts: SessionFacts) -> dict[str, Any]:
    return {
        "source": facts.source,
        "native_id": facts.native_id,
        "path": facts.path,
        "cwd": facts.cwd,
        "scope": facts.scope,
        "git_branch": facts.git_branch,
        "git_remote": facts.git_remote,
        "agent_version": facts.agent_version,
        "origin": facts.origin,
        "interactive": int(facts.interactive),
        "started_at": iso(facts.started_at),
        "updated_at": iso(facts.updated_at),
        "first_user_message": facts.first_user_message,
        "content_hash": facts.content_hash,
        "line_count": facts.line_count,
        "item_count": facts.item_count,
        "user_message_count": facts.user_message_count,
        "redactions": facts.redactions,
    }


def _update(sql: Sql, name: str, row_id: str, values: dict[str, Any], key: str = "id") -> None:
    sets = ", ".join(f"{col} = ?" for col in values)
    sql.run(f"UPDATE {table(name)} SET {sets} WHERE {key} = ?", [*values.values(), row_id])


def _insert(sql: Sql, name: str, values: dict[str, Any]) -> None:
    cols = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    sql.run(f"INSERT INTO {table(name)} ({cols}) VALUES ({marks})", list(values.values()))


# Texts a withdrawn (pruned, deleted, disabled, polluted) session no longer shows; the log keeps them.
_WITHDRAWN: dict[str, Any] = {"rollout_summary": None, "raw_memory": None, "rollout_slug": None, "first_user_message": None}


def _session(sql: Sql, e: Any) -> None:
    sid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, Session.Recorded):
        _insert(
            sql,
            "sessions",
            {
                "id": sid,
                **_facts_columns(e.facts),
                "mode": "enabled",
                "mode_reason": "",
                "eligible": None,
                "eligibility_reasons": "[]",
                "extraction_status": "none",
                "attempts": 0,
                "pruned": 0,
                "deleted": 0,
                "recorded_at": at,
                "changed_at": at,
            },
        )
        return
    values: dict[str, Any] = {"changed_at": at}
    if isinstance(e, Session.Updated):
        values.update(_facts_columns(e.facts))
        values["pruned"] = 0
        row = sql.one(f"SELECT extraction_status FROM {table('sessions')} WHERE id = ?", [sid])
        if row is not None and row["extraction_status"] in ("failed", "retrying", "claimed"):
            # New content: earlier failures and claims were for the old version.
            values.update(extraction_status="none", attempts=0, retry_after=None, claim_worker=None, claim_until=None)
    elif isinstance(e, Session.ModeChanged):
        values.update(mode=e.mode.value, mode_reason=e.reason)
        if e.mode.value != "enabled":  # a disabled or polluted session's texts leave the view
            values.update(_WITHDRAWN)
    elif isinstance(e, Session.Scrubbed):
        for name in ("first_user_message", "rollout_summary", "rollout_slug", "raw_memory", "cwd", "git_branch", "path"):
            if getattr(e, name, None) is not None:
                values[name] = getattr(e, name)
    elif isinstance(e, Session.Rerecorded):
        row = sql.one(f"SELECT mode, pruned, deleted, extraction_status FROM {table('sessions')} WHERE id = ?", [sid])
        if row is not None and row["mode"] == "enabled" and not row["pruned"] and not row["deleted"]:
            values["first_user_message"] = e.first_user_message
            if row["extraction_status"] == "extracted":
                values.update(rollout_summary=e.rollout_summary, rollout_slug=e.rollout_slug, raw_memory=e.raw_memory)
    elif isinstance(e, Session.EligibilityAssessed):
        values.update(eligible=int(e.eligible), eligibility_reasons=js(list(e.reasons)))
    elif isinstance(e, Session.ExtractionClaimed):
        values.update(extraction_status="claimed", claim_worker=e.worker, claim_until=iso(e.lease_until))
    elif isinstance(e, Session.Extracted):
        values.update(
            extraction_status="extracted",
            claim_worker=None,
            claim_until=None,
            extracted_hash=e.content_hash,
            rollout_summary=e.rollout_summary,
            rollout_slug=e.rollout_slug,
            raw_memory=e.raw_memory,
            extraction_model=e.model,
            extracted_at=at,
            attempts=0,
            retry_after=None,
            last_error=None,
        )
    elif isinstance(e, Session.ExtractedNothing):
        values.update(
            extraction_status="nothing",
            claim_worker=None,
            claim_until=None,
            extracted_hash=e.content_hash,
            rollout_summary=None,
            rollout_slug=None,
            raw_memory=None,
            extraction_model=e.model,
            extracted_at=at,
            attempts=0,
        )
    elif isinstance(e, Session.ExtractionFailed):
        values.update(
            extraction_status="failed" if e.retry_after is None else "retrying",
            claim_worker=None,
            claim_until=None,
            attempts=e.attempt,
            retry_after=iso(e.retry_after),
            last_error=e.error,
        )
    elif isinstance(e, Session.Pruned):
        values.update(pruned=1, **_WITHDRAWN)
    elif isinstance(e, Session.Deleted):
        values.update(deleted=1, **_WITHDRAWN)
    _update(sql, "sessions", sid, values)


def _search_drop(sql: Sql, item_id: str) -> None:
    sql.run(f"DELETE FROM {table('search_rows')} WHERE item_id = ?", [item_id])  # by its unique index


def _search_put(
    sql: Sql, item_id: str, scope: str, kind: str, title: str, text: str, keywords: tuple[str, ...], fresh: bool = False
) -> None:
    if not fresh:
        _search_drop(sql, item_id)
    rows = table("search_rows")
    sql.run(
        f"INSERT INTO {rows} (id, item_id, scope, kind, title, text, keywords) "
        f"SELECT COALESCE(MAX(id), 0) + 1, ?, ?, ?, ?, ?, ? FROM {rows}",  # the newest row has the highest id
        [item_id, scope, kind, title, text, " ".join(keywords)],
    )


def _set_evidence(sql: Sql, item_id: str, evidence: tuple[Any, ...]) -> None:
    sql.run(f"DELETE FROM {table('item_evidence')} WHERE item_id = ?", [item_id])
    sql.many(
        f"INSERT INTO {table('item_evidence')} (item_id, session_id) VALUES (?, ?)",
        [(item_id, str(s)) for s in sorted({str(s) for s in evidence})],
    )


def _spans(spans: Any) -> str:
    return js([s.model_dump(mode="json") for s in spans])


def _skill(skill: Skill | None) -> str | None:
    return skill.model_dump_json() if skill is not None else None


def _searched(text: str, skill: Skill | None) -> str:
    """What search finds an item by: its text, and a skill's steps and what it relies on too."""
    return " ".join([text, *skill_texts(skill)]) if skill is not None else text


def _row_skill(row: dict[str, Any]) -> Skill | None:
    return Skill.model_validate_json(row["skill"]) if row.get("skill") else None


def _item(sql: Sql, e: Any) -> None:
    iid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, MemoryItem.Added):
        _insert(
            sql,
            "items",
            {
                "id": iid,
                "kind": e.kind,
                "scope": e.scope,
                "task_group": e.task_group,
                "title": e.title,
                "text": e.text,
                "keywords": js(list(e.keywords)),
                "evidence": js([str(s) for s in e.evidence]),
                "trust": e.trust.value,
                "status": ItemStatus.ACTIVE.value,
                "valid_from": iso(e.valid_from),
                "valid_to": None,
                "created_at": at,
                "updated_at": at,
                "consolidation_id": str(e.consolidation_id) if e.consolidation_id else None,
                "revision": 1,
                "pinned": 0,
                "context_rank": context_rank(e.trust.value),
                "use_count": 0,
                "spans": _spans(e.spans),
                "skill": _skill(e.skill),
            },
        )
        _set_evidence(sql, iid, e.evidence)
        _search_put(sql, iid, e.scope, e.kind, e.title, _searched(e.text, e.skill), e.keywords, fresh=True)
        _count_context_line(sql, iid)
        return
    row = sql.one(f"SELECT * FROM {table('items')} WHERE id = ?", [iid])
    if row is None:  # pragma: no cover - an item event always follows its Added
        return
    values: dict[str, Any] = {"updated_at": at, "revision": int(row["revision"]) + 1}
    if isinstance(e, MemoryItem.Revised):
        values.update(
            title=e.title,
            text=e.text,
            keywords=js(list(e.keywords)),
            evidence=js([str(s) for s in e.evidence]),
            consolidation_id=str(e.consolidation_id) if e.consolidation_id else row["consolidation_id"],
        )
        if e.valid_from is not None:
            values["valid_from"] = iso(e.valid_from)
        if e.spans is not None:
            values["spans"] = _spans(e.spans)
        skill = e.skill if e.skill is not None else _row_skill(row)
        if e.skill is not None:
            values["skill"] = _skill(e.skill)
        _set_evidence(sql, iid, e.evidence)
        if row["status"] == ItemStatus.ACTIVE.value:
            _search_put(sql, iid, row["scope"], row["kind"], e.title, _searched(e.text, skill), e.keywords)
    elif isinstance(e, MemoryItem.Retired):
        # A retired item's text leaves the view (it may carry a forgotten value); explain reads it from the log.
        values.update(status=ItemStatus.RETIRED.value, title="", text="", keywords="[]", spans="[]", skill=None)
        _search_drop(sql, iid)
    elif isinstance(e, MemoryItem.Invalidated):
        values.update(status=ItemStatus.INVALIDATED.value, valid_to=iso(e.valid_to))
        _search_drop(sql, iid)
    elif isinstance(e, MemoryItem.Reviewed):
        values["trust"] = e.verdict.value
        values["context_rank"] = context_rank(e.verdict.value)
    elif isinstance(e, MemoryItem.Edited):
        values.update(title=e.title, text=e.text)
        if row["status"] == ItemStatus.ACTIVE.value:
            keywords = tuple(json.loads(row["keywords"] or "[]"))
            _search_put(sql, iid, row["scope"], row["kind"], e.title, _searched(e.text, _row_skill(row)), keywords)
    elif isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned)):
        values["pinned"] = int(isinstance(e, MemoryItem.Pinned))
    elif isinstance(e, MemoryItem.ScopeChanged):
        values["scope"] = e.scope
        if row["status"] == ItemStatus.ACTIVE.value:
            keywords = tuple(json.loads(row["keywords"] or "[]"))
            _search_put(sql, iid, e.scope, row["kind"], row["title"] or "", _searched(row["text"] or "", _row_skill(row)), keywords)
    elif isinstance(e, MemoryItem.Rerecorded):
        values["task_group"] = e.task_group
        if row["status"] != ItemStatus.RETIRED.value:  # a retired item's text has left the view
            values.update(title=e.title, text=e.text, keywords=js(list(e.keywords)), spans=_spans(e.spans))
            if e.skill is not None:
                values["skill"] = _skill(e.skill)
        if row["status"] == ItemStatus.ACTIVE.value:
            skill = e.skill if e.skill is not None else _row_skill(row)
            _search_put(sql, iid, row["scope"], row["kind"], e.title, _searched(e.text, skill), e.keywords)
    _update(sql, "items", iid, values)
    _count_context_line(sql, iid)


def _count_context_line(sql: Sql, item_id: str) -> None:
    """Store the tokens of the item's context line, so context never runs a tokenizer (see domain.services.read)."""
    if sql.count_tokens is None:
        return
    from mnemolog.domain.services.read import context_line
    from mnemolog.projections.reads import (
        item_row,  # imported here: reads imports this module's neighbours
    )

    row = sql.one(f"SELECT * FROM {table('items')} WHERE id = ?", [item_id])
    if row is None or row["status"] != ItemStatus.ACTIVE.value:
        return
    tokens = sql.count_tokens(context_line(item_row(row)) + "\n")
    sql.run(f"UPDATE {table('items')} SET context_tokens = ? WHERE id = ?", [tokens, item_id])


def _consolidation(sql: Sql, e: Any) -> None:
    cid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, Consolidation.Started):
        _insert(
            sql,
            "consolidations",
            {
                "id": cid,
                "status": "running",
                "started_at": at,
                "worker": e.worker,
                "model": e.model,
                "selection": js([s.model_dump(mode="json") for s in e.selection]),
                "diff": js(e.diff.model_dump(mode="json")),
            },
        )
    elif isinstance(e, Consolidation.Completed):
        _update(
            sql,
            "consolidations",
            cid,
            {
                "status": "completed",
                "ended_at": at,
                "added": e.added,
                "revised": e.revised,
                "retired": e.retired,
                "invalidated": e.invalidated,
                "overrides": js([o.model_dump(mode="json") for o in e.overrides]),
                "user_profile": e.user_profile,
                "model": e.model,
                "prompt_hash": e.prompt_hash,
                "input_tokens": e.input_tokens,
                "output_tokens": e.output_tokens,
            },
        )
    elif isinstance(e, (Consolidation.ProfileScrubbed, Consolidation.Rerecorded)):
        _update(sql, "consolidations", cid, {"user_profile": e.user_profile})
    elif isinstance(e, Consolidation.Failed):
        _update(
            sql,
            "consolidations",
            cid,
            {
                "status": "failed",
                "ended_at": at,
                "error": e.error,
                "overrides": js([o.model_dump(mode="json") for o in e.rejected]),
            },
        )


def _bump(sql: Sql, name: str, key: str, value: str, at: str | None) -> None:
    row = sql.one(f"SELECT use_count FROM {table(name)} WHERE {key} = ?", [value])
    if row is None:
        _insert(sql, name, {key: value, "use_count": 1, "last_used": at})
    else:
        _update(sql, name, value, {"use_count": int(row["use_count"]) + 1, "last_used": at}, key=key)


def context_rank(trust: str) -> int:
    """The order context lists items in: accepted, proposed, doubted (rejected ones never: 3)."""
    return {"accepted": 0, "proposed": 1, "doubted": 2}.get(trust, 3)


def _citation(sql: Sql, e: Citation.Recorded) -> None:
    at = iso(e.cited_at)
    _insert(
        sql,
        "citations",
        {
            "id": str(e.originator_id),
            "citing_session": e.citing_session,
            "source": e.source,
            "cited_at": at,
            "items": js(sorted({str(i) for i in e.item_ids})),
        },
    )
    for sid in sorted({str(s) for s in e.session_ids}):
        _bump(sql, "session_usage", "session_id", sid, at)
    for iid in sorted({str(i) for i in e.item_ids}):
        _bump(sql, "item_usage", "item_id", iid, at)
        # The count also lives on the item row, so context reads items in rank order from an index.
        sql.run(f"UPDATE {table('items')} SET use_count = COALESCE(use_count, 0) + 1 WHERE id = ?", [iid])
        _count_context_line(sql, iid)  # the line shows the count


def _injection(sql: Sql, e: Injection.Served) -> None:
    at = iso(e.served_at)
    _insert(
        sql,
        "injections",
        {
            "id": str(e.originator_id),
            "session": e.session,
            "project": e.project,
            "surface": e.surface,
            "served_at": at,
            "tokens": e.tokens,
            "items": js([i.model_dump(mode="json") for i in e.items]),
        },
    )
    for iid in sorted({str(i.item_id) for i in e.items}):
        row = sql.one(f"SELECT served_count FROM {table('item_serving')} WHERE item_id = ?", [iid])
        if row is None:
            _insert(sql, "item_serving", {"item_id": iid, "served_count": 1, "last_served": at})
        else:
            _update(sql, "item_serving", iid, {"served_count": int(row["served_count"]) + 1, "last_served": at}, key="item_id")


def _tombstone(sql: Sql, e: Any) -> None:
    tid = str(e.originator_id)
    if isinstance(e, Tombstone.Placed):
        _insert(
            sql,
            "tombstones",
            {
                "id": tid,
                "digest": e.digest,
                "width": e.width,
                "scope": e.scope,
                "reason": e.reason,
                "placed_at": iso(e.timestamp),
                "lifted": 0,
                "suppressions": 0,
            },
        )
    elif isinstance(e, Tombstone.Lifted):
        _update(sql, "tombstones", tid, {"lifted": 1})
    elif isinstance(e, Tombstone.Replaced):
        _update(sql, "tombstones", tid, {"lifted": 0})
    elif isinstance(e, Tombstone.Suppressed):
        sql.run(f"UPDATE {table('tombstones')} SET suppressions = suppressions + 1 WHERE id = ?", [tid])


def _note(sql: Sql, e: Any) -> None:
    nid = str(e.originator_id)
    if isinstance(e, Note.Recorded):
        _insert(
            sql,
            "notes",
            {
                "id": nid,
                "text": e.text,
                "intent": e.intent,
                "scope": e.scope,
                "source": e.source,
                "written_at": iso(e.written_at),
                "applied_by": None,
                "withdrawn": 0,
            },
        )
    elif isinstance(e, (Note.Scrubbed, Note.Rerecorded)):
        _update(sql, "notes", nid, {"text": e.text})
    elif isinstance(e, Note.Applied):
        _update(sql, "notes", nid, {"applied_by": str(e.consolidation_id)})
    elif isinstance(e, Note.Withdrawn):
        _update(sql, "notes", nid, {"withdrawn": 1})


def _ignore(sql: Sql, e: Any) -> None:
    return None


HANDLERS: tuple[tuple[type, Callable[[Sql, Any], None]], ...] = (
    (Session.Event, _session),
    (MemoryItem.Event, _item),
    (Consolidation.Event, _consolidation),
    (Citation.Recorded, _citation),
    (Injection.Served, _injection),
    (Tombstone.Event, _tombstone),
    (Note.Event, _note),
    (PhaseTwoLease.Event, _ignore),
)


def apply_event(sql: Sql, domain_event: Any) -> None:
    """Apply one event to the view tables (unknown event types are ignored)."""
    for cls, handler in HANDLERS:
        if isinstance(domain_event, cls):
            handler(sql, domain_event)
            return
