"""`render` streams the folder from the views: the same bytes as rendering the whole model, no tokenizer on a re-render.

The store has skills (two of one name in different projects), three scopes,
several task groups, tasks over several days, sessions in two projects, a
forgotten value, and enough items that o200k cuts the summary. What
``write_memory_folder`` writes is compared, file by file, with
``render_folder`` over the whole model read at once (``ViewReads.folder_model``),
which ``tests/unit/test_folder_recorded.py`` holds to the renderer before
streaming, byte for byte.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mnemolog.adapters.store import Store
from mnemolog.adapters.tokens import count_tokens
from mnemolog.cli.memory_folder import write_memory_folder
from mnemolog.domain.memory_item import EditedBy, MemoryItem, Trust
from mnemolog.domain.services.forget import forget_value
from mnemolog.domain.skill import Skill, SkillStep
from mnemolog.projections.folder_model import without_forgotten
from mnemolog.projections.markdown_folder import render_folder, summary_line
from mnemolog.projections.rendered_folder import folder_skills
from support.memory import extracted_session
from support.stores import FixedClock, StoreFactory

API = "git:example.com/acme/api"
WEB = "git:example.com/acme/web"
SCOPES = ("global", API, WEB)
KINDS = ("preference", "knowledge", "failure", "task", "knowledge", "task")
TRUSTS = (Trust.PROPOSED, Trust.ACCEPTED, Trust.PROPOSED, Trust.DOUBTED)

_RENDER_AGAIN = """
import sys
from pathlib import Path
from mnemolog.adapters.store import open_store
from mnemolog.adapters.settings import Settings
from mnemolog.cli.memory_folder import write_memory_folder
store = open_store(Settings(home=Path(sys.argv[1]), database_url=sys.argv[2] or None))
write_memory_folder(store, Path(sys.argv[3]), sys.argv[4] or None)
print("bpe_openai" in sys.modules)
"""


def _skill(scope: str, name: str, evidence: tuple) -> MemoryItem:  # type: ignore[type-arg]
    return MemoryItem(
        kind="skill", scope=scope, task_group="procedures", title="", keywords=("make",), evidence=evidence,
        text=f"Use when you need to build and test in {scope.rsplit('/', 1)[-1]}: the steps in order",
        valid_from=None, consolidation_id=None, reason="test", by=EditedBy.USER,
        skill=Skill(name=name, steps=(SkillStep(command="make deps"), SkillStep(command="make test", action="runs the tests")), relies_on=("make",)),
    )


def _filled(store: Store, clock: FixedClock) -> None:
    day = datetime(2026, 10, 1, tzinfo=UTC)
    sessions = {
        API: [extracted_session(store, f"0197a000-0000-7000-8000-0000000000{n:02d}", API, f"api work {n}", updated_at=day + timedelta(days=n), cwd="/src/api") for n in range(4)],
        WEB: [extracted_session(store, f"0197b000-0000-7000-8000-0000000000{n:02d}", WEB, f"web work {n}", updated_at=day + timedelta(days=2 * n), cwd="/src/web") for n in range(3)],
    }
    items = []
    for n in range(420):
        scope = SCOPES[n % 3]
        own = sessions.get(scope, sessions[API])
        items.append(
            MemoryItem(
                kind=KINDS[n % 6], scope=scope, task_group=f"group {n % 7}" if n % 5 else "",
                title=f"Topic {n}" if n % 4 else "",
                text=f"When touching module {n}: run `make check-{n % 9}` first, then **review** the diff." + (" (project: api)" if n == 31 else ""),
                keywords=tuple(f"kw{(n * k) % 13}" for k in range(n % 4)),
                evidence=tuple(own[(n + k) % len(own)] for k in range(1 + n % 2)),
                valid_from=None, consolidation_id=None, reason="test", trust=TRUSTS[n % 4], by=EditedBy.USER,
            )
        )
    items += [_skill(API, "build-and-test", tuple(sessions[API][:2])), _skill(WEB, "build-and-test", tuple(sessions[WEB][:2])), _skill("global", "release", ())]
    for start in range(0, len(items), 60):  # several batches, the clock moving: items differ in age
        store.app.save_all(*items[start : start + 60])
        clock.advance(hours=7)
    store.catch_up()
    forget_value(store, "module 17:", "global")
    store.catch_up()


@pytest.fixture
def store(store_factory: StoreFactory) -> Store:
    clock = FixedClock()
    made = store_factory(clock=clock)
    _filled(made, clock)
    return made


def _on_disk(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("project", [None, API])
def test_the_streamed_folder_is_byte_identical_to_the_whole_model_rendered(store: Store, project: str | None, tmp_path: Path) -> None:
    out = tmp_path / "memories"
    written = write_memory_folder(store, out, project)
    whole = render_folder(without_forgotten(store.reads().folder_model(project), store.matcher()), count_tokens)
    assert _on_disk(out) == whole and sorted(written) == sorted(whole)
    summary = whole["memory_summary.md"]
    assert "see MEMORY.md" in summary or count_tokens(summary) > 2000  # the budget cut it
    assert count_tokens(summary) <= 2500
    assert any(path.startswith("skills/build-and-test") for path in whole)
    skills = folder_skills(store.reads(), store.matcher(), project)  # read from the skills alone
    assert {f"skills/{name}/SKILL.md": text for name, text in skills.items()} == {p: t for p, t in whole.items() if p.startswith("skills/")}
    assert "module 17:" not in "".join(whole.values())


def test_item_rows_carry_the_tokens_of_their_summary_line(store: Store) -> None:
    rows = list(store.reads().folder_items())
    assert len(rows) > 400
    for row in rows:
        assert row.summary_tokens == count_tokens(summary_line(row) + "\n")


def test_a_re_render_loads_no_tokenizer_and_writes_the_same_bytes(store: Store, tmp_path: Path) -> None:
    url = store.settings.database_url.get_secret_value() if store.settings.database_url else ""
    env = {k: v for k, v in os.environ.items() if k != "MNEMOLOG_DATABASE_URL"}
    (Path(store.settings.home) / "token-counts.json").unlink(missing_ok=True)
    loaded = []
    for n in range(2):
        out = tmp_path / f"folder-{n}"
        run = subprocess.run(
            [sys.executable, "-c", _RENDER_AGAIN, str(store.settings.home), url, str(out), API],
            capture_output=True, text=True, check=True, env=env,
        )
        loaded.append(run.stdout.split())
    whole = render_folder(without_forgotten(store.reads().folder_model(API), store.matcher()), count_tokens)
    assert _on_disk(tmp_path / "folder-0") == _on_disk(tmp_path / "folder-1") == whole
    assert loaded[1] == ["False"]  # the summary's headings were counted by the first render and remembered
