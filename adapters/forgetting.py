"""Forgetting, pruning and reset on an open store: the domain commands wired to the views."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from uuid import UUID

from mnemolog.adapters.bootstrap import Store
from mnemolog.adapters.scope import folder_scope
from mnemolog.domain import forget, retention
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.tombstone import tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint
from mnemolog.projections.reads import ViewReads
from mnemolog.projections.schema import table

_SCOPE_PREFIXES = ("git:", "path:")


def resolve_scope(project: str | None, global_: bool = False) -> str:
    """The tombstone scope: a scope key as given, a directory's project scope, or global (the default)."""
    if global_ or not project:
        return str(GLOBAL_SCOPE)
    if project == GLOBAL_SCOPE or project.startswith(_SCOPE_PREFIXES):
        return str(project)
    return folder_scope(project)


def _sessions_carrying(store: Store, matcher: TombstoneMatcher) -> list[UUID]:
    rows = ViewReads(store.view).query(
        f"SELECT id, scope, first_user_message, rollout_summary, rollout_slug, raw_memory FROM {table('sessions')} ORDER BY id"
    )
    found = []
    for row in rows:
        texts = [row[c] for c in ("first_user_message", "rollout_summary", "rollout_slug", "raw_memory") if row[c]]
        if any(matcher.contains(t, row["scope"]) for t in texts):
            found.append(UUID(row["id"]))
    return found


def _session_matcher(store: Store, value: str, scope: str) -> TombstoneMatcher:
    key = store.tombstone_key()
    digest, width = fingerprint(key, value)
    return TombstoneMatcher(key, [TombstoneRule(tombstone_id_for(digest, scope), digest, width, scope)])


def forget_value(store: Store, value: str, scope: str, reason: str = forget.DEFAULT_REASON) -> forget.ForgetResult:
    """Tombstone ``value``, retire the items and scrub the session texts that carry it."""
    store.catch_up()
    reads = ViewReads(store.view)
    sessions = _sessions_carrying(store, _session_matcher(store, value, scope))
    notes = [UUID(r["id"]) for r in reads.query(f"SELECT id FROM {table('notes')} ORDER BY id")]
    runs = [UUID(r["id"]) for r in reads.query(f"SELECT id FROM {table('consolidations')} WHERE user_profile <> '' ORDER BY id")]
    result = forget.forget_value(
        store.app, store.tombstone_key(), value, scope, reason, reads.active_items(), sessions=sessions, notes=notes, runs=runs
    )
    store.catch_up()
    return result


def resolve_session(store: Store, reference: str) -> UUID | None:
    """A session's id from its mnemolog id or its agent's own id (a Codex thread id, a Claude session id)."""
    store.catch_up()
    rows = ViewReads(store.view).query(f"SELECT id FROM {table('sessions')} WHERE id = ? OR native_id = ?", [reference, reference])
    return UUID(rows[0]["id"]) if len(rows) == 1 else None


def forget_session(store: Store, session_id: UUID) -> forget.SessionForgetResult:
    """Delete a session; retire the items it was the sole evidence of."""
    store.catch_up()
    reads = ViewReads(store.view)
    live = reads.live_session_ids() | reads.live_note_ids()  # a note nobody withdrew is evidence too
    result = forget.forget_session(store.app, session_id, reads.active_items(), live_sessions=live)
    store.catch_up()
    return result


def forget_item(store: Store, item_id: UUID) -> forget.ItemForgetResult:
    """Retire an item and tombstone its text."""
    store.catch_up()
    reads = ViewReads(store.view)
    item = store.app.find(item_id)
    sessions: list[UUID] = []
    if item is not None and hasattr(item, "text") and (item.text or item.title):
        sessions = _sessions_carrying(store, _session_matcher(store, item.text or item.title, item.scope))
    result = forget.forget_item(store.app, store.tombstone_key(), item_id, reads.active_items(), sessions=sessions)
    store.catch_up()
    return result


def lift(store: Store, tombstone_id: UUID, reason: str) -> bool:
    """Lift a tombstone."""
    done = bool(forget.lift(store.app, tombstone_id, reason))
    store.catch_up()
    return done


def prune(store: Store, retention_days: float | None = None) -> retention.WithdrawResult:
    """The retention sweep with the configured window (Codex's 30 days by default)."""
    store.catch_up()
    reads = ViewReads(store.view)
    days = store.settings.retention_days if retention_days is None else retention_days
    result = retention.prune(
        store.app,
        reads.candidates(),
        reads.active_items(),
        reads.live_session_ids() | reads.live_note_ids(),  # a note nobody withdrew is evidence too
        now=store.clock(),
        retention=timedelta(days=days),
        limit=store.settings.max_selected,
    )
    store.catch_up()
    return result


def reset(store: Store, reason: str = "at the user's request") -> retention.WithdrawResult:
    """Withdraw all memory (every extraction and every active item), as events."""
    store.catch_up()
    reads = ViewReads(store.view)
    rows = reads.query(f"SELECT id FROM {table('sessions')} WHERE pruned = 0 AND deleted = 0 ORDER BY id")
    result = retention.reset(store.app, [UUID(r["id"]) for r in rows], reads.active_items(), reason)
    store.catch_up()
    return result


def retire_orphans(store: Store) -> tuple[UUID, ...]:
    """Retire the items whose evidence is all in sessions that can no longer feed memory.

    Only sessions that are gone for good count (deleted, pruned, disabled,
    polluted): one that is merely being re-extracted keeps its items.
    """
    store.catch_up()
    reads = ViewReads(store.view)
    rows = reads.query(f"SELECT id FROM {table('sessions')} WHERE deleted = 1 OR pruned = 1 OR mode <> 'enabled'")
    gone = frozenset(UUID(r["id"]) for r in rows)
    if not gone:
        return ()
    retired: tuple[UUID, ...] = forget.retire_orphans(store.app, reads.active_items(), gone, "session polluted, disabled, deleted or pruned")
    store.catch_up()
    return retired


def session_ids(values: Sequence[str]) -> list[UUID]:
    """Parse session ids given on the command line (aggregate ids)."""
    return [UUID(v) for v in values]
