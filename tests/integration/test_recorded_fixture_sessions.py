"""Each real session file is recorded exactly as before: its facts, every transcript item, the report.

The digests in ``data/recorded_fixture_sessions.json`` were taken from the code
before ingest was made faster (reading, line finding, redaction); a change in
what a session records (an item's text, kind, tool, line, timestamp, a fact, a
redaction, a warning) changes its digest. Only digests are kept: the session
files themselves stay in ``../shared/fixtures``. When a change of what is
recorded is meant, write the file anew from ``recorded(store, folder)`` on a
SQLite store with the test's ``FixedClock`` (and say why in the commit).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from support.session_pipeline import ingest_files
from support.shared_fixtures import SHARED, shared_fixture

EXPECTED = Path(__file__).parent / "data" / "recorded_fixture_sessions.json"


def _digest(value: Any, root: Path) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False).replace(str(root), "<fixtures>")
    return hashlib.sha256(text.encode()).hexdigest()


def recorded(store: Any, root: Path) -> dict[str, dict[str, Any]]:
    """Per fixture (its path under the fixtures folder): digests of what ingest recorded, and the item count."""
    shared_fixture("codex-rollouts")
    for source in sorted(SHARED.rglob("*.jsonl")):
        target = root / source.relative_to(SHARED)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    report = ingest_files(store, [root])
    assert report.new == report.files_read and not report.errors, report.as_dict()
    got: dict[str, dict[str, Any]] = {"<report>": {"digest": _digest(report.as_dict(), root)}}
    store.catch_up()
    for session_id in sorted(store.reads().withdrawable_session_ids(), key=str):
        session = store.app.find(session_id)
        items = [item.model_dump(mode="json") for item in session.transcript]
        got[str(Path(session.facts.path).relative_to(root))] = {
            "facts": _digest(session.facts.model_dump(mode="json"), root),
            "items": _digest(items, root),
            "item_count": len(items),
            "eligible": session.eligible,
        }
    return got


def test_every_real_session_is_recorded_as_before(store_factory, tmp_path: Path) -> None:
    got = recorded(store_factory(), tmp_path / "sessions")
    assert got == json.loads(EXPECTED.read_text())
