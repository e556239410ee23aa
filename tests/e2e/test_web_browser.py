"""`mnemolog serve` in a real headless Chromium, on a store built from the shared session fixtures (acceptance 1 and 2).

The store is made by the CLI as a user would: ``run --all`` over the real
Codex and Claude Code sessions (offline models), a note applied and then
withdrawn (so the last consolidation has a code override). A person then
clicks through the page; each change must show at once on the page, in
``mnemolog context`` and in the rendered memory folder. Screenshots go to
test-output/web/.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support.browser import chromium, screenshot, served
from support.cli import run_cli
from support.shared_fixtures import shared_fixture

ITEM_LINE = re.compile(r"\[item:([0-9a-f-]{36})\]")


@dataclass
class Served:
    """The running page, the environment its store is configured by, and where the folder is."""

    url: str
    env: dict[str, str]
    folder: Path

    def cli(self, *args: str) -> Any:
        done = run_cli(*args, env=self.env)
        assert done.code == 0, done.err
        return done

    def events(self) -> int:
        return int(self.cli("doctor", "--json").json()["events"])

    def memory(self) -> str:
        return (self.folder / "MEMORY.md").read_text()

    def scope_of(self, item_id: str) -> str:
        listed = self.cli("list", "items", "--all", "--json").json()["items"]
        return str(next(i["scope"] for i in listed if i["id"] == item_id))

    def explain(self, item_id: str) -> dict[str, Any]:
        """``explain`` read in the item's own project (explain is scoped like show)."""
        return dict(self.cli("explain", item_id, "--project", self.scope_of(item_id), "--json").json())

    def context(self, item_id: str) -> str:
        return str(self.cli("context", "--project", self.scope_of(item_id)).out)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("web-e2e")
    codex = root / "codex" / "sessions" / "2026" / "05" / "11"
    claude = root / "claude" / "projects" / "sample"
    codex.mkdir(parents=True)
    claude.mkdir(parents=True)
    for source in shared_fixture("codex-rollouts").glob("*.jsonl"):
        shutil.copyfile(source, codex / source.name)
    for source in shared_fixture("claude-code").glob("*.jsonl"):
        shutil.copyfile(source, claude / source.name)
    env = {
        "HOME": str(root / "home"),
        "CODEX_HOME": str(root / "codex"),
        "CLAUDE_CONFIG_DIR": str(root / "claude"),
        "MNEMOLOG_HOME": str(root / "data"),
    }
    first = run_cli("run", "--all", env=env)
    assert first.code == 0, first.err
    note = run_cli("note", "Always use pnpm, never npm, in every repository.", "--scope", "global", "--json", env=env).json()["note"]
    assert run_cli("run", "--all", env=env).code == 0  # applies the note: an item whose only evidence it is
    assert run_cli("note", "--withdraw", note, env=env).code == 0
    assert run_cli("run", "--all", env=env).code == 0  # code retires that item: its evidence is gone
    with served(env) as url:
        yield Served(url, env, root / "data" / "memories")


@pytest.fixture(scope="module")
def browser(site: Served) -> Iterator[Any]:
    with chromium() as opened:
        yield opened


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    yield tab
    tab.close()


def sections(memory: str) -> list[list[str]]:
    """The item ids of each section of MEMORY.md, in order."""
    found: list[list[str]] = []
    for block in re.split(r"\n#+ ", memory):
        ids = [m for line in block.splitlines() if line.startswith("- ") for m in ITEM_LINE.findall(line)[:1]]
        if ids:
            found.append(ids)
    return found


def item_with(memory: str, words: str) -> str:
    """The id of the item whose line in MEMORY.md holds ``words`` (each test steers its own items)."""
    return next(ITEM_LINE.findall(line)[0] for line in memory.splitlines() if words in line and ITEM_LINE.search(line))


def done_line(page: Any) -> str:
    return str(page.locator("p.done").inner_text())


def test_accept_and_reject_show_at_once_on_the_page_in_context_and_in_the_folder(site: Served, page: Any) -> None:
    memory = site.memory()
    crowded = max(sections(memory), key=len)  # a section with items before and after the ones it moves
    assert len(crowded) >= 3
    accept, reject = crowded[-1], crowded[0]
    page.goto(site.url + "review")
    screenshot(page, "review-queue")

    page.locator(f'article[data-item="{accept}"] button', has_text="Accept").click()
    assert f"item {accept[:8]} is now accepted" in done_line(page)
    assert page.locator(f'article[data-item="{accept}"] .trust').inner_text() == "accepted"
    line = next(x for x in site.context(accept).splitlines() if accept in x)
    assert "accepted" in line
    accepted_section = next(ids for ids in sections(site.memory()) if accept in ids)
    assert accepted_section[0] == accept  # accepted items come first in the folder

    page.locator(f'article[data-item="{reject}"] button', has_text="Reject").click()
    assert f"item {reject[:8]} is now rejected" in done_line(page)
    assert page.locator(f'article[data-item="{reject}"]').count() == 0  # it left the queue
    assert reject not in site.context(reject)
    assert reject not in site.memory()
    screenshot(page, "review-after-accept-and-reject")


def test_an_edit_shows_on_the_item_page_with_its_before_and_after_in_context_and_in_the_folder(site: Served, page: Any) -> None:
    target = item_with(site.memory(), "`cargo test` passed")
    before = site.explain(target)["now"]["text"]
    new_text = "Build with make release; the npm build script is deprecated."
    page.goto(site.url + f"items/{target[:8]}")
    assert page.locator("#item-text").inner_text().endswith(before.split()[-1])
    page.locator("details.edit summary").click()
    page.locator("details.edit textarea[name=text]").fill(new_text)
    page.locator("details.edit input[name=reason]").fill("the script moved")
    page.locator("details.edit button", has_text="Save edit").click()

    assert f"item {target[:8]} edited" in done_line(page)
    assert new_text in page.locator("#item-text").inner_text()
    edit = page.locator("li.event.edited")
    assert edit.count() == 1
    assert before[:40] in edit.locator(".before").inner_text()
    assert new_text in edit.locator(".after").inner_text()
    assert "release;" in edit.locator("ins").all_inner_texts()[0] or any("release" in t for t in edit.locator("ins").all_inner_texts())
    assert edit.locator("del").count() > 0
    assert new_text in site.context(target)
    assert new_text in site.memory()
    screenshot(page, "item-after-edit")


def test_the_item_page_shows_where_it_came_from(site: Served, page: Any) -> None:
    target = item_with(site.memory(), "number_generator.py` failed")
    story = site.explain(target)
    page.goto(site.url + f"items/{target}")
    session = page.locator("section.session").first
    assert story["sessions"], "an item extracted from a session names it"
    source = story["sessions"][0]
    assert source["path"] in session.inner_text() and source["native_id"] in session.inner_text()
    lines = session.locator(".source-line")
    assert lines.count() >= 1  # the transcript entries the item came from
    assert any("number_generator" in text for text in lines.all_inner_texts())  # a span quotes the command
    assert page.locator("li.event.added .after").count() == 1
    screenshot(page, "item-page")


def test_forget_a_value_previews_then_confirms(site: Served, page: Any) -> None:
    value = "just format"
    carrier = item_with(site.memory(), value)
    page.goto(site.url + "forget")
    page.locator("#forget-value input[name=target]").fill(value)
    events = site.events()
    page.locator("#forget-value button", has_text="Preview").click()

    preview = page.locator("#forget-preview")
    assert preview.locator(f'li[data-item="{carrier}"]').count() == 1
    previewed = preview.locator("li[data-item]").count()  # every item carrying the value
    assert "Nothing has been written yet" in preview.inner_text()
    assert site.events() == events  # the preview changed nothing
    assert value in site.memory()
    screenshot(page, "forget-preview")

    page.locator("#forget-confirm button", has_text="Forget for good").click()
    assert "placed" in done_line(page) and f"{previewed} item(s) retired" in done_line(page)
    assert value not in page.content()  # tombstones are listed without their values
    assert page.locator("table.tombstones tr.active").count() == 1
    assert value not in site.memory()
    assert carrier not in site.context(carrier)
    screenshot(page, "forget-done")

    page.locator("table.tombstones tr.active button", has_text="Lift").click()
    assert "lifted" in done_line(page)
    assert page.locator("table.tombstones tr.lifted").count() == 1
    assert carrier not in site.memory()  # items it retired stay retired


def test_a_consolidation_page_shows_its_diff_and_the_codes_overrides(site: Served, page: Any) -> None:
    page.goto(site.url + "consolidations")
    page.locator("table.runs a").first.click()  # the newest run: the one that retired the withdrawn note's item
    overrides = page.locator("ul.overrides li.override.retired")
    assert overrides.count() == 1
    assert "all evidence is gone" in overrides.inner_text()
    retire = page.locator("ol.edits li.edit.retire")
    assert retire.count() == 1 and "pnpm" in retire.locator("del").inner_text()
    facts = page.locator("dl.facts").inner_text()
    assert "heuristic" in facts and re.search(r"[0-9a-f]{64}", facts)
    screenshot(page, "consolidation-audit")

    page.goto(site.url + "consolidations")
    page.locator("table.runs a").nth(1).click()  # the run that applied the note: it added the item
    assert "pnpm" in page.locator("ol.edits li.edit.add ins").all_inner_texts()[-1] or any(
        "pnpm" in t for t in page.locator("ol.edits li.edit ins").all_inner_texts()
    )


def test_the_time_page_shows_memory_as_it_stood_after_an_earlier_run(site: Served, page: Any) -> None:
    page.goto(site.url + "time")
    links = page.locator("p.muted a")
    assert links.count() == 3  # one per consolidation, newest first
    links.nth(1).click()  # just after the run that applied the note
    assert "as it stood at" in page.locator("#time-result").inner_text()
    assert "pnpm" in page.locator("details.file").first.inner_text()
    assert "pnpm" not in site.memory()  # memory now: the note was withdrawn, its item retired
    screenshot(page, "time-as-of")

    page.locator("input[value=valid_at]").check()
    page.locator("form.filters button").click()
    assert "as valid at" in page.locator("#time-result").inner_text()
    assert page.locator("ul.valid-items li[data-item]").count() > 0


def test_projects_and_the_next_sessions_context_as_the_cli_prints_it(site: Served, page: Any) -> None:
    page.goto(site.url)
    assert page.locator("section.project").count() >= 3
    coverage = " ".join(page.locator("table.coverage td:first-child").all_inner_texts())
    assert "codex" in coverage and "claude-code" in coverage
    assert page.locator("figure.chart svg polyline").count() >= 2
    screenshot(page, "projects")

    project = site.scope_of(item_with(site.memory(), "number_generator.py` failed"))
    page.goto(site.url + f"context?project={project}")
    printed = site.cli("context", "--project", project).out
    assert page.locator("#context-text").inner_text().strip() == printed.strip()
    tokens = page.locator("#context-tokens").inner_text()
    assert re.match(r"\d+ tokens of a \d+-token budget", tokens)
    screenshot(page, "next-session")


def test_pin_and_move_to_user_wide_from_the_review_queue(site: Served, page: Any) -> None:
    target = item_with(site.memory(), "`python /workspace/number_generator.py` failed")
    page.goto(site.url + "review")
    card = page.locator(f'article[data-item="{target}"]')
    card.locator("button", has_text="Pin").click()
    assert f"item {target[:8]} now pinned" in done_line(page)
    card = page.locator(f'article[data-item="{target}"]')
    assert card.locator(".pinned").count() == 1

    card.locator("select[name=scope]").select_option("global")
    card.locator("button", has_text="Move").click()
    assert f"item {target[:8]} moved to user-wide" in done_line(page)
    other = site.scope_of(item_with(site.memory(), "npm run build"))
    assert target in site.cli("context", "--project", other).out  # user-wide memory reaches every project
    assert "user-wide" in page.locator(f'article[data-item="{target}"]').inner_text()
