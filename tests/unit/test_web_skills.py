"""The web page shows a skill: its steps on the item page, and the steps before and after a revision."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_memory_store
from mnemolog.domain.memory_item import EditedBy, MemoryItem
from mnemolog.domain.skill import Skill, SkillStep
from support.web import text_of, web_client

API = "git:github.com/acme/api"
STEPS = (SkillStep(command="make deps"), SkillStep(command="make build", action="compiles the app"), SkillStep(command="make test"))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_memory_store(Settings(home=tmp_path / "home"))
    yield opened
    opened.close()


def test_the_item_page_shows_the_steps_and_how_a_revision_changed_them(store: Store) -> None:
    skill = Skill(name="deps-build-test", steps=STEPS, relies_on=("make", "Makefile"))
    item = MemoryItem(kind="skill", scope=API, task_group="api", title="deps-build-test", text="Use to build and test the app",
                      keywords=("make",), evidence=(), valid_from=None, consolidation_id=None, reason="test", by=EditedBy.USER, skill=skill)
    store.app.save_all(item)
    client, _ = web_client(store)

    page = text_of(client.get(f"/items/{item.id}").text)
    assert "skill deps-build-test · skills/deps-build-test/SKILL.md" in page
    assert "make deps make build — compiles the app make test" in page
    assert "relies on: make, Makefile" in page

    revised = skill.model_copy(update={"steps": (STEPS[0], SkillStep(command="make compile"), STEPS[2])})
    item.revise(title=item.title, text=item.text, keywords=item.keywords, evidence=(), valid_from=None, consolidation_id=None,
                reason="make build is gone", skill=revised)
    store.app.save_all(item)
    page = text_of(client.get(f"/items/{item.id}").text)
    assert "before 1. make deps; 2. make build; 3. make test" in page
    assert "after 1. make deps; 2. make compile; 3. make test" in page
