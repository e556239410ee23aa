"""Driving the web page in tests: an app over a given store, its CSRF token, what a page says after a write."""

from __future__ import annotations

import re
from contextlib import nullcontext
from html import unescape

from mnemolog.adapters.bootstrap import Store
from mnemolog.cli.web.app import create_app
from mnemolog.cli.web.security import Access
from starlette.testclient import TestClient

LOOPBACK = "http://127.0.0.1:8377"


def web_client(store: Store, access: Access | None = None, base_url: str = LOOPBACK) -> tuple[TestClient, Access]:
    """A TestClient on the page's app whose every request uses ``store`` (loopback rules unless ``access``)."""
    rules = access or Access(loopback=True)
    app = create_app(rules, lambda: nullcontext(store))
    return TestClient(app, base_url=base_url, follow_redirects=True), rules


def notice(html: str) -> str:
    """The 'done' or 'problem' line a page shows after a write ('' when none)."""
    found = re.search(r'<p class="(?:done|problem)"[^>]*>(.*?)</p>', html, re.S)
    return unescape(found.group(1)).strip() if found else ""


def text_of(html: str) -> str:
    """A page's text without tags (for asserting what a person reads)."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
