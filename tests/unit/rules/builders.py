"""Small builders shared by the rule tests: items, edits, plans, matchers, candidates."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from uuid import UUID, uuid5

from hypothesis import HealthCheck, settings
from mnemolog.domain.plan import GLOBAL_SCOPE, ConsolidationPlan, Edit
from mnemolog.domain.reads import ItemRow
from mnemolog.domain.tombstone import tombstone_id_for
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint

KEY = b"rule-test-key"
API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
NAMESPACE = UUID("00000000-0000-4000-8000-000000000000")

# Property tests stay small: each module runs in a second or two, with no example database on disk.
FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def uid(name: str) -> UUID:
    """A stable id for a name (so failures print the same ids every run)."""
    return uuid5(NAMESPACE, name)


def rule(value: str, scope: str = GLOBAL_SCOPE) -> TombstoneRule:
    """The tombstone a user places with ``forget VALUE`` (``--project`` gives ``scope``)."""
    digest, width = fingerprint(KEY, value)
    return TombstoneRule(tombstone_id_for(digest, scope), digest, width, scope)


def matcher(*rules: TombstoneRule) -> TombstoneMatcher:
    """A matcher over these tombstones."""
    return TombstoneMatcher(KEY, rules)


def forgetting(value: str, scope: str = GLOBAL_SCOPE) -> TombstoneMatcher:
    """A matcher with one tombstone for ``value`` in ``scope``."""
    return matcher(rule(value, scope))


def item(
    name: str,
    *,
    scope: str = API,
    text: str = "Run make test before pushing.",
    title: str = "",
    keywords: tuple[str, ...] = (),
    task_group: str = "",
    evidence: Iterable[UUID] = (),
    kind: str = "knowledge",
) -> ItemRow:
    """A current (active) item as phase 2 sees it."""
    return ItemRow(
        item_id=uid(name),
        kind=kind,
        scope=scope,
        task_group=task_group,
        title=title,
        text=text,
        keywords=keywords,
        evidence=tuple(evidence),
    )


def plan(*edits: Edit) -> ConsolidationPlan:
    """A plan of these edits."""
    return ConsolidationPlan(edits=edits)


def add(*evidence: UUID | str, **fields: object) -> Edit:
    """An add edit citing ``evidence``."""
    return Edit.model_validate({"op": "add", "text": "Use ripgrep.", "evidence": [str(e) for e in evidence], **fields})


def revise(target: str, *evidence: UUID | str, **fields: object) -> Edit:
    """A revise edit of handle ``target`` citing ``evidence``."""
    return Edit.model_validate(
        {"op": "revise", "target": target, "text": "Use ripgrep.", "evidence": [str(e) for e in evidence], **fields}
    )
