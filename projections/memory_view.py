"""How each event changes the projection tables.

``apply_event`` is the single place where the log becomes rows; both the
incremental catch-up and a rebuild call it, which is what makes them equal.
The rules change rows held in a ``ViewRows`` (read from the tables when first
needed, written in bulk when the batch is flushed), never the tables directly.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mnemolog.projections import excerpt_rows
from mnemolog.projections.view_rows import UNLISTED_RANK, ViewRows, key_column

if TYPE_CHECKING:  # at run time each rule imports its own aggregate's names (see RULES)
    from mnemolog.domain.citation import Citation
    from mnemolog.domain.injection import Injection
    from mnemolog.domain.session import SessionFacts
    from mnemolog.domain.skill import Skill


def iso(value: datetime | None) -> str | None:
    """ISO text for a time (None stays None)."""
    return value.isoformat() if value is not None else None


def js(value: Any) -> str:
    """Stable JSON text."""
    if not value and isinstance(value, list):
        return "[]"  # most keyword, evidence and span lists (the encoder's setup costs more than the answer)
    return _ENCODER.encode(value)


_ENCODER = json.JSONEncoder(sort_keys=True, default=str)  # json.dumps with options builds an encoder per call


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


# Texts a withdrawn (pruned, deleted, disabled, polluted) session no longer shows; the log keeps them.
_WITHDRAWN: dict[str, Any] = {"rollout_summary": None, "raw_memory": None, "rollout_slug": None, "first_user_message": None}


def _session(rows: ViewRows, e: Any) -> None:
    from mnemolog.domain.session import Session
    sid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, Session.Recorded):
        rows.insert(
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
        excerpt_rows.put_transcript(rows, sid, e.facts.scope, e.transcript)
        return
    values: dict[str, Any] = {"changed_at": at}
    if isinstance(e, Session.Updated):
        excerpt_rows.put_transcript(rows, sid, e.facts.scope, e.transcript)
        values.update(_facts_columns(e.facts))
        values["pruned"] = 0
        row = rows.get("sessions", sid)
        if row is not None and row["extraction_status"] in ("failed", "retrying", "claimed"):
            # New content: earlier failures and claims were for the old version.
            values.update(extraction_status="none", attempts=0, retry_after=None, claim_worker=None, claim_until=None)
    elif isinstance(e, Session.ModeChanged):
        values.update(mode=e.mode.value, mode_reason=e.reason)
        if e.mode.value != "enabled":  # a disabled or polluted session's texts leave the view
            values.update(_WITHDRAWN)
            excerpt_rows.drop(rows, sid)
    elif isinstance(e, Session.Scrubbed):  # a Restored too: the texts a lift puts back
        excerpt_rows.change_texts(rows, sid, e.transcript)
        for name in ("first_user_message", "rollout_summary", "rollout_slug", "raw_memory", "cwd", "git_branch", "path"):
            if getattr(e, name, None) is not None:
                values[name] = getattr(e, name)
    elif isinstance(e, Session.Rerecorded):
        row = rows.get("sessions", sid)
        if row is not None and row["mode"] == "enabled" and not row["pruned"] and not row["deleted"]:
            excerpt_rows.put_transcript(rows, sid, row["scope"], e.transcript)
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
        excerpt_rows.drop(rows, sid)
        values.update(pruned=1, **_WITHDRAWN)
    elif isinstance(e, Session.Deleted):
        excerpt_rows.drop(rows, sid)
        values.update(deleted=1, **_WITHDRAWN)
    rows.update("sessions", sid, values)


def _search_put(rows: ViewRows, item_id: str, scope: str, kind: str, title: str, text: str, keywords: tuple[str, ...]) -> None:
    rows.search_put(item_id, (scope, kind, title, text, " ".join(keywords)))


def _set_evidence(rows: ViewRows, item_id: str, evidence: tuple[Any, ...]) -> None:
    rows.set_evidence(item_id, sorted({str(s) for s in evidence}))


def _spans(spans: Any) -> str:
    return js([s.model_dump(mode="json") for s in spans])


def _skill(skill: Skill | None) -> str | None:
    return skill.model_dump_json() if skill is not None else None


def _searched(text: str, skill: Skill | None) -> str:
    """What search finds an item by: its text, and a skill's steps and what it relies on too."""
    from mnemolog.domain.skill import skill_texts
    return " ".join([text, *skill_texts(skill)]) if skill is not None else text


def _row_skill(row: dict[str, Any]) -> Skill | None:
    from mnemolog.domain.skill import Skill
    return Skill.model_validate_json(row["skill"]) if row.get("skill") else None


def _item(rows: ViewRows, e: Any) -> None:
    from mnemolog.domain.memory_item import ItemStatus, MemoryItem
    iid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, MemoryItem.Added):
        rows.insert(
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
                "edited_by_user": 0,
                "context_rank": context_rank(e.trust.value),
                "use_count": 0,
                "spans": _spans(e.spans),
                "skill": _skill(e.skill),
            },
        )
        _set_evidence(rows, iid, e.evidence)
        _search_put(rows, iid, e.scope, e.kind, e.title, _searched(e.text, e.skill), e.keywords)
        if e.consolidation_id:
            rows.link("run_edits", (str(e.consolidation_id), iid))
        return
    row = rows.get("items", iid)
    if row is None:  # pragma: no cover - an item event always follows its Added
        return
    run = getattr(e, "consolidation_id", None)  # Revised, Retired, Invalidated: the run that made them, if one did
    if run:
        rows.link("run_edits", (str(run), iid))
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
        _set_evidence(rows, iid, e.evidence)
        if row["status"] == ItemStatus.ACTIVE.value:
            _search_put(rows, iid, row["scope"], row["kind"], e.title, _searched(e.text, skill), e.keywords)
    elif isinstance(e, MemoryItem.Retired):
        # A retired item's text leaves the view (it may carry a forgotten value); explain reads it from the log.
        values.update(status=ItemStatus.RETIRED.value, title="", text="", keywords="[]", spans="[]", skill=None)
        rows.search_drop(iid)
    elif isinstance(e, MemoryItem.Invalidated):
        values.update(status=ItemStatus.INVALIDATED.value, valid_to=iso(e.valid_to))
        rows.search_drop(iid)
    elif isinstance(e, MemoryItem.Reviewed):
        values["trust"] = e.verdict.value
        values["context_rank"] = context_rank(e.verdict.value)
    elif isinstance(e, MemoryItem.Edited):
        values.update(title=e.title, text=e.text, edited_by_user=1)
        if row["status"] == ItemStatus.ACTIVE.value:
            keywords = tuple(json.loads(row["keywords"] or "[]"))
            _search_put(rows, iid, row["scope"], row["kind"], e.title, _searched(e.text, _row_skill(row)), keywords)
    elif isinstance(e, (MemoryItem.Pinned, MemoryItem.Unpinned)):
        values["pinned"] = int(isinstance(e, MemoryItem.Pinned))
    elif isinstance(e, MemoryItem.ScopeChanged):
        values["scope"] = e.scope
        if row["status"] == ItemStatus.ACTIVE.value:
            keywords = tuple(json.loads(row["keywords"] or "[]"))
            _search_put(rows, iid, e.scope, row["kind"], row["title"] or "", _searched(row["text"] or "", _row_skill(row)), keywords)
    elif isinstance(e, MemoryItem.Rerecorded):
        values["task_group"] = e.task_group
        if row["status"] != ItemStatus.RETIRED.value:  # a retired item's text has left the view
            values.update(title=e.title, text=e.text, keywords=js(list(e.keywords)), spans=_spans(e.spans))
            if e.skill is not None:
                values["skill"] = _skill(e.skill)
        if row["status"] == ItemStatus.ACTIVE.value:
            skill = e.skill if e.skill is not None else _row_skill(row)
            _search_put(rows, iid, row["scope"], row["kind"], e.title, _searched(e.text, skill), e.keywords)
    rows.update("items", iid, values)


def context_line_tokens(count_tokens: Callable[[str], int]) -> Callable[[dict[str, Any]], dict[str, int]]:
    """The tokens of the lines readers count for an active item row, so neither context nor a render runs a tokenizer:
    its context line (``domain.context_lines``) and its memory_summary.md line (``markdown_folder.summary_line``).

    ``ViewRows`` counts them at the flush for every item a batch changed (its text, trust or use count).
    The lines are made from an ``ItemRow`` holding only what they show (``reads.shown_item_row``).
    """
    from mnemolog.domain.context_lines import context_line
    from mnemolog.projections.markdown_folder import summary_line
    from mnemolog.projections.view_reads import shown_item_row

    def tokens(row: dict[str, Any]) -> dict[str, int]:
        shown = shown_item_row(row)
        return {"context_tokens": count_tokens(context_line(shown) + "\n"), "summary_tokens": count_tokens(summary_line(shown) + "\n")}

    return tokens


def _consolidation(rows: ViewRows, e: Any) -> None:
    from mnemolog.domain.consolidation import Consolidation
    cid = str(e.originator_id)
    at = iso(e.timestamp)
    if isinstance(e, Consolidation.Started):
        rows.insert(
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
        rows.update(
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
        rows.update("consolidations", cid, {"user_profile": e.user_profile})
    elif isinstance(e, Consolidation.Failed):
        rows.update(
            "consolidations",
            cid,
            {
                "status": "failed",
                "ended_at": at,
                "error": e.error,
                **({"model": e.model} if e.model else {}),  # the model that failed, when it was not the one started with
                **({"prompt_hash": e.prompt_hash} if e.prompt_hash else {}),
                "overrides": js([o.model_dump(mode="json") for o in e.rejected]),
            },
        )


def _bump(rows: ViewRows, name: str, value: str, at: str | None) -> None:
    row = rows.get(name, value)
    if row is None:
        rows.insert(name, {key_column(name): value, "use_count": 1, "last_used": at})
    else:
        rows.update(name, value, {"use_count": int(row["use_count"]) + 1, "last_used": at})


def context_rank(trust: str) -> int:
    """The order context lists items in: accepted, proposed, doubted (rejected ones never: 3)."""
    return _RANKS.get(trust, UNLISTED_RANK)


_RANKS = {"accepted": 0, "proposed": 1, "doubted": 2}


def _citation(rows: ViewRows, e: Citation.Recorded) -> None:
    at = iso(e.cited_at)
    rows.insert(
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
        _bump(rows, "session_usage", sid, at)
    for iid in sorted({str(i) for i in e.item_ids}):
        _bump(rows, "item_usage", iid, at)
        rows.link("item_citations", (iid, str(e.originator_id), iso(e.timestamp)))
        # The count also lives on the item row, so context reads items in rank order from an index.
        cited = rows.get("items", iid)
        if cited is not None:
            rows.update("items", iid, {"use_count": int(cited["use_count"] or 0) + 1})


def _injection(rows: ViewRows, e: Injection.Served) -> None:
    at = iso(e.served_at)
    rows.insert(
        "injections",
        {
            "id": str(e.originator_id),
            "session": e.session,
            "project": e.project,
            "surface": e.surface,
            "served_at": at,
            "tokens": e.tokens,
            "items": js([i.model_dump(mode="json") for i in e.items]),
            "excerpts": js(list(e.excerpts)),
        },
    )
    for iid in sorted({str(i.item_id) for i in e.items}):
        row = rows.get("item_serving", iid)
        if row is None:
            rows.insert("item_serving", {"item_id": iid, "served_count": 1, "last_served": at})
        else:
            rows.update("item_serving", iid, {"served_count": int(row["served_count"]) + 1, "last_served": at})


def _tombstone(rows: ViewRows, e: Any) -> None:
    from mnemolog.domain.tombstone import Tombstone
    tid = str(e.originator_id)
    if isinstance(e, Tombstone.Placed):
        rows.insert(
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
        rows.update("tombstones", tid, {"lifted": 1})
    elif isinstance(e, Tombstone.Replaced):
        rows.update("tombstones", tid, {"lifted": 0})
    elif isinstance(e, Tombstone.Suppressed):
        row = rows.get("tombstones", tid)
        if row is not None:
            rows.update("tombstones", tid, {"suppressions": int(row["suppressions"]) + 1})


def _note(rows: ViewRows, e: Any) -> None:
    from mnemolog.domain.note import Note
    nid = str(e.originator_id)
    if isinstance(e, Note.Recorded):
        rows.insert(
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
        rows.update("notes", nid, {"text": e.text})
    elif isinstance(e, Note.Applied):
        rows.update("notes", nid, {"applied_by": str(e.consolidation_id)})
    elif isinstance(e, Note.Withdrawn):
        rows.update("notes", nid, {"withdrawn": 1})


def _ignore(rows: ViewRows, e: Any) -> None:
    return None


Rule = Callable[[ViewRows, Any], None]

# Each rule with the event class it takes (module, class), first match wins. The domain's modules are
# not imported here: building an aggregate's pydantic event classes costs ~1 ms each, and the
# SessionStart hook projects one Injection (its previous run's) and needs no other aggregate. An
# event's own module is loaded already (the mapper resolved its topic to decode it), so the first event
# of a class is matched against the rules whose module is loaded (a class outside every loaded module
# cannot be an instance of theirs), and each rule imports from its own aggregate's module.
RULES: tuple[tuple[str, str, Rule], ...] = (
    ("mnemolog.domain.session", "Session.Event", _session),
    ("mnemolog.domain.memory_item", "MemoryItem.Event", _item),
    ("mnemolog.domain.consolidation", "Consolidation.Event", _consolidation),
    ("mnemolog.domain.citation", "Citation.Recorded", _citation),
    ("mnemolog.domain.injection", "Injection.Served", _injection),
    ("mnemolog.domain.tombstone", "Tombstone.Event", _tombstone),
    ("mnemolog.domain.note", "Note.Event", _note),
    ("mnemolog.domain.consolidation", "PhaseTwoLease.Event", _ignore),
)

_RULE_OF: dict[type, Rule | None] = {}  # each event class seen, and its rule (None: ignored)


def _rule_for(cls: type) -> Rule | None:
    """The rule for events of ``cls`` (None: no rule takes them), binding the names the rules use."""
    for module_name, path, rule in RULES:
        module = sys.modules.get(module_name)
        if module is not None:
            owner, attribute = path.split(".")
            if issubclass(cls, getattr(getattr(module, owner), attribute)):
                return rule
    return None


def apply_event(rows: ViewRows, domain_event: Any) -> None:
    """Apply one event to the view tables (unknown event types are ignored)."""
    cls = type(domain_event)
    try:
        rule = _RULE_OF[cls]
    except KeyError:
        rule = _RULE_OF[cls] = _rule_for(cls)
    if rule is not None:
        rule(rows, domain_event)
