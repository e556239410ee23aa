"""Driving the web page in tests: an app over a given store, its CSRF token, what a page says after a write."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from html import unescape

from mnemolog.adapters.store import Store
from mnemolog.cli.web.app import create_app
from mnemolog.cli.web.security import Access
from starlette.testclient import TestClient

LOOPBACK = "http://127.0.0.1:8377"


def web_client(store: Store, access: Access | None = None, base_url: str = LOOPBACK) -> tuple[TestClient, Access]:
    """A TestClient on the page's app whose every request uses ``store`` (loopback rules unless ``access``)."""
    rules = access or Access(loopback=True)
    app = create_app(rules, lambda: _kept_open(store))
    return TestClient(app, base_url=base_url, follow_redirects=True), rules


@contextmanager
def _kept_open(store: Store) -> Iterator[Store]:
    """A request's store session over a store the test keeps open: its followers in step after a write, as the page's own."""
    from mnemolog.adapters.store_session import settle

    yield store
    settle(store)


def notice(html: str) -> str:
    """The 'done' or 'problem' line a page shows after a write ('' when none)."""
    found = re.search(r'<p class="(?:done|problem)"[^>]*>(.*?)</p>', html, re.S)
    return unescape(found.group(1)).strip() if found else ""


def text_of(html: str) -> str:
    """A page's text without tags (for asserting what a person reads)."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
