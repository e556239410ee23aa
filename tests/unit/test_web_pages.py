"""The web page's reads and writes over an in-memory store: what a person sees, and that each write is an event shown at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mnemolog.adapters.agent_context import context_preview
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_memory_store
from mnemolog.domain.memory_item import Trust
from support.memory import extracted_session, item, save
from support.web import notice, text_of, web_client

API = "git:github.com/acme/api"
WEB = "git:github.com/acme/web"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_memory_store(Settings(home=tmp_path / "home"))
    yield opened
    opened.close()


def post(client, access, path: str, **form: str):
    return client.post(path, data={**form, "csrf_token": access.csrf})


def test_projects_lists_each_scope_with_its_items_coverage_and_a_chart(store: Store) -> None:
    extracted_session(store, "019a0000-0000-7000-8000-000000000001", API, "Fixed the retry test.", updated_at=datetime(2026, 10, 20, tzinfo=UTC))
    save(store, item(API, "Run make lint before pushing."), item(API, "Deploys use Jenkins.", trust=Trust.ACCEPTED), item("global", "Answer in English."))
    client, _ = web_client(store)

    html = client.get("/").text
    page = text_of(html)

    assert "user-wide" in page and API in page
    assert "2 current (1 proposed, 1 accepted, 0 doubted, 0 rejected)" in page
    assert "codex 1 1 0 1" in page  # agent, seen, eligible, waiting, extracted
    assert "<svg" in html and "items: 2" in page and "sessions: 1" in page


def test_the_next_session_page_shows_exactly_what_context_prints(store: Store) -> None:
    save(store, item(API, "Run make lint before pushing."), item(WEB, "Use pnpm."), item("global", "Answer in English."))
    client, _ = web_client(store)

    before = store.app.max_notification_id()
    html = client.get("/context", params={"project": API}).text
    assert store.app.max_notification_id() == before  # a preview: nothing was served to an agent, nothing is recorded
    expected = context_preview(store, API)

    assert text_of(html).count(f"{expected.tokens} tokens of a {expected.budget}-token budget") == 1
    shown = html.split('<pre id="context-text">', 1)[1].split("</pre>", 1)[0]
    from html import unescape

    assert unescape(shown) == expected.text
    assert "make lint" in shown and "Answer in English" in shown and "pnpm" not in shown


def test_items_filter_by_project_kind_trust_status_and_text(store: Store) -> None:
    lint, jenkins, _ = save(
        store,
        item(API, "Run make lint before pushing.", kind="knowledge"),
        item(API, "Deploys use Jenkins.", kind="failure", trust=Trust.DOUBTED),
        item(WEB, "Use pnpm.", kind="knowledge"),
    )
    client, _ = web_client(store)

    def shown(**params: str) -> set[str]:
        html = client.get("/items", params=params).text
        return {line.split('"')[1] for line in html.split("data-item=")[1:]}

    assert shown() == {lint, jenkins, shown(project=WEB).pop()}
    assert shown(project=API) == {lint, jenkins}
    assert shown(kind="failure") == {jenkins}
    assert shown(trust="doubted") == {jenkins}
    assert shown(text="LINT") == {lint}
    assert shown(status="retired") == set()


def test_the_review_queue_puts_proposed_items_first(store: Store) -> None:
    accepted, doubted, proposed = save(
        store,
        item(API, "Accepted one.", trust=Trust.ACCEPTED),
        item(API, "Doubted one.", trust=Trust.DOUBTED),
        item(API, "Proposed one."),
    )
    client, _ = web_client(store)
    html = client.get("/review").text
    assert html.index(f'article class="queued proposed" data-item="{proposed}"') < html.index(doubted) < html.index(accepted)


def test_accept_reject_and_doubt_are_events_the_context_follows_at_once(store: Store) -> None:
    first, second = save(store, item(API, "Run make lint before pushing."), item(API, "Deploys use Jenkins."))
    client, access = web_client(store)
    before = store.app.max_notification_id()

    accepted = post(client, access, f"/items/{second}/review", verdict="accepted", back="/review")
    assert accepted.url.path == "/review" and notice(accepted.text) == f"item {second[:8]} is now accepted"
    context = context_preview(store, API).text
    assert context.index(second) < context.index(first)

    rejected = post(client, access, f"/items/{first}/review", verdict="rejected")
    assert rejected.url.path == f"/items/{first}" and "trust rejected" in text_of(rejected.text)
    assert first not in context_preview(store, API).text
    assert first not in client.get("/review").text  # rejected items leave the queue

    again = post(client, access, f"/items/{second[:8]}/review", verdict="accepted")  # a prefix names it
    assert notice(again.text) == f"item {second[:8]} is already accepted"
    assert store.app.max_notification_id() == before + 2

    bad = post(client, access, f"/items/{second}/review", verdict="loved")
    assert "unknown verdict" in notice(bad.text) and store.app.max_notification_id() == before + 2


def test_edit_pin_and_scope_change_show_on_the_item_page_and_in_context(store: Store) -> None:
    (lint,) = save(store, item(API, "Run make lint before pushing.", title="Lint"))
    client, access = web_client(store)

    edited = post(client, access, f"/items/{lint}/edit", title="Lint", text="Run make lint and make typecheck before pushing.", reason="typecheck too")
    assert notice(edited.text) == f"item {lint[:8]} edited"
    assert "<ins>" in edited.text and "typecheck" in edited.text.split("<ins>", 1)[1]
    assert "make typecheck" in context_preview(store, API).text

    pinned = post(client, access, f"/items/{lint}/pin", pinned="1")
    assert notice(pinned.text) == f"item {lint[:8]} now pinned" and "pinned" in text_of(pinned.text)

    moved = post(client, access, f"/items/{lint}/scope", scope="global")
    assert notice(moved.text) == f"item {lint[:8]} moved to user-wide"
    assert lint in context_preview(store, WEB).text  # user-wide memory reaches every project
    story = text_of(client.get(f"/items/{lint}").text)
    assert "edited by user" in story and "pinned" in story and "scope changed" in story

    refused = post(client, access, f"/items/{lint}/scope", scope="path:/nowhere")
    assert "not a known scope" in notice(refused.text)
    empty = post(client, access, f"/items/{lint}/edit", text="   ")
    assert "needs text" in notice(empty.text)


def test_an_unknown_item_or_run_is_a_404_page(store: Store) -> None:
    client, _ = web_client(store)
    for path in ("/items/00000000-0000-4000-8000-000000000000", "/items/zz", "/consolidations/abcdef12"):
        missing = client.get(path)
        assert missing.status_code == 404 and "no " in text_of(missing.text)


def test_a_write_can_only_return_to_a_page_of_this_site(store: Store) -> None:
    (lint,) = save(store, item(API, "Run make lint before pushing."))
    client, access = web_client(store)
    response = client.post(
        f"/items/{lint}/review", data={"verdict": "doubted", "back": "//evil.example/x", "csrf_token": access.csrf}, follow_redirects=False
    )
    assert response.status_code == 303 and response.headers["location"].startswith(f"/items/{lint}?")


def test_a_short_value_is_previewed_with_a_warning(store: Store) -> None:
    save(store, item(API, "Run make lint before pushing."), item(API, "Use a venv."))
    client, access = web_client(store)
    before = store.app.max_notification_id()
    preview = post(client, access, "/forget/preview", what="value", target="a", scope="global")
    assert 'id="forget-short"' in preview.text and "shorter than 3 characters" in text_of(preview.text)
    assert store.app.max_notification_id() == before
    longer = post(client, access, "/forget/preview", what="value", target="make lint", scope="global")
    assert 'id="forget-short"' not in longer.text and "1 item(s) would retire" in text_of(longer.text)


def test_back_in_the_queue_the_page_scrolls_to_the_item_and_says_what_happened_there(store: Store) -> None:
    first, second = save(store, item(API, "Run make lint before pushing."), item(API, "Deploys use Jenkins."))
    client, access = web_client(store)
    moved = client.post(
        f"/items/{second}/review", data={"verdict": "doubted", "back": "/review", "csrf_token": access.csrf}, follow_redirects=False
    )
    assert moved.status_code == 303 and moved.headers["location"].endswith(f"#item-{second}")
    html = client.get(moved.headers["location"]).text
    card = html.split(f'id="item-{second}"', 1)[1].split("</article>", 1)[0]
    assert f'<p class="acted">item {second[:8]} is now doubted</p>' in card
    assert 'class="acted' not in html.split(f'id="item-{first}"', 1)[1].split("</article>", 1)[0]
