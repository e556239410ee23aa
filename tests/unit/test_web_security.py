"""Who may use the page (acceptance 4): loopback or a token, a CSRF token on every POST, the Host header checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import Store, open_memory_store
from mnemolog.cli.web.security import MIN_TOKEN, Access, BindRefused, check_bind, is_loopback
from support.cli import run_cli
from support.memory import item, save
from support.web import web_client

API = "git:github.com/acme/api"
TOKEN = "s3cret-token-for-the-tests-0123456789"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_memory_store(Settings(home=tmp_path / "home"))
    yield opened
    opened.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_addresses_need_no_token(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.com"])
def test_a_non_loopback_bind_is_refused_without_a_token_and_the_refusal_prints_one(host: str) -> None:
    assert not is_loopback(host)
    with pytest.raises(BindRefused, match=r"not a loopback address.*--token \S{40,}"):
        check_bind(host, None)
    check_bind(host, TOKEN)  # with a token it may
    with pytest.raises(BindRefused, match=f"at least {MIN_TOKEN}"):
        check_bind(host, "short")


def test_serve_refuses_a_non_loopback_bind_without_the_token(tmp_path: Path) -> None:
    refused = run_cli("serve", "--host", "0.0.0.0", "--port", "0")
    assert refused.code == 2
    assert "refusing to bind 0.0.0.0" in refused.err and "--token" in refused.err
    assert "Traceback" not in refused.err


def test_a_post_without_the_csrf_token_is_refused_and_writes_nothing(store: Store) -> None:
    (first,) = save(store, item(API, "Run make lint before pushing."))
    client, access = web_client(store)
    before = store.app.max_notification_id()

    for form in ({"verdict": "accepted"}, {"verdict": "accepted", "csrf_token": "forged"}, {"verdict": "accepted", "csrf_token": ""}):
        refused = client.post(f"/items/{first}/review", data=form)
        assert refused.status_code == 403 and "CSRF" in refused.text
    assert client.post("/forget", data={"what": "value", "target": "make lint", "scope": "global"}).status_code == 403
    assert client.post(f"/items/{first}/review", content=b'{"verdict": "accepted"}', headers={"content-type": "application/json"}).status_code == 403
    assert store.app.max_notification_id() == before

    done = client.post(f"/items/{first}/review", data={"verdict": "accepted", "csrf_token": access.csrf})
    assert done.status_code == 200 and f"item {first[:8]} is now accepted" in done.text
    assert store.app.max_notification_id() == before + 1


def test_the_csrf_token_is_in_every_form_of_the_page(store: Store) -> None:
    (first,) = save(store, item(API, "Run make lint before pushing."))
    client, access = web_client(store)
    for path in ("/review", f"/items/{first}", "/forget"):
        html = client.get(path).text
        assert html.count('method="post"') > 0
        assert html.count('method="post"') == html.count(f'name="csrf_token" value="{access.csrf}"'), path


def test_a_post_from_another_origin_is_refused(store: Store) -> None:
    (first,) = save(store, item(API, "Run make lint before pushing."))
    client, access = web_client(store)
    refused = client.post(f"/items/{first}/review", data={"verdict": "rejected", "csrf_token": access.csrf}, headers={"origin": "https://evil.example"})
    assert refused.status_code == 403 and "another site" in refused.text


def test_on_loopback_only_loopback_host_names_reach_the_page(store: Store) -> None:
    client, _ = web_client(store)
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "localhost:8377"}).status_code == 200
    rebound = client.get("/", headers={"host": "evil.example:8377"})  # DNS rebinding
    assert rebound.status_code == 400 and "localhost" in rebound.text


def test_beyond_loopback_every_request_needs_the_token(store: Store) -> None:
    access = Access(loopback=False, token=TOKEN)
    client, _ = web_client(store, access, base_url="http://192.0.2.10:8377")

    assert client.get("/").status_code == 401
    assert client.get("/items", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/items", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    signed_in = client.get(f"/items?token={TOKEN}&kind=task")  # the printed URL: the token moves to a cookie
    assert signed_in.status_code == 200 and signed_in.url.path == "/items" and "token" not in str(signed_in.url)
    assert client.get("/").status_code == 200  # the cookie carries it from now on
    assert client.get("/", headers={"cookie": f'other="a b\\c"; mnemolog_token={TOKEN}'}).status_code == 200  # other apps' cookies
    assert client.post("/forget", data={"what": "value", "target": "x", "scope": "global"}).status_code == 403  # still CSRF


def test_pages_tell_the_browser_to_keep_nothing_and_frame_nothing(store: Store) -> None:
    client, _ = web_client(store)
    headers = client.get("/").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert headers["cache-control"] == "no-store"


def test_a_body_over_the_cap_is_refused_with_413_and_writes_nothing_one_within_it_is_served(store: Store) -> None:
    from mnemolog.cli.web.body_limit import MAX_BODY

    (first,) = save(store, item(API, "Run make lint before pushing."))
    client, access = web_client(store)
    before = store.app.max_notification_id()
    big = {"csrf_token": access.csrf, "text": "x" * MAX_BODY}
    refused = client.post(f"/items/{first}/edit", data=big)
    assert refused.status_code == 413 and "larger than" in refused.text
    assert client.get("/items", headers={"content-length": str(MAX_BODY + 1)}).status_code == 413
    streamed = client.post(f"/items/{first}/edit", content=iter([b"csrf_token=" + access.csrf.encode() + b"&text=", b"x" * MAX_BODY]),
                           headers={"content-type": "application/x-www-form-urlencoded"})
    assert streamed.status_code == 413  # no length declared: counted as it streams
    assert store.app.max_notification_id() == before
    edited = client.post(f"/items/{first}/edit", data={"csrf_token": access.csrf, "text": "Run make lint. " * 20000})
    assert edited.status_code == 200 and store.app.max_notification_id() > before
