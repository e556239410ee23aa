"""A real headless Chromium (Debian's ``chromium``, driven by Playwright) and a real ``mnemolog serve`` for the page tests.

Playwright's own browser downloads are never used: the system browser is
launched by its path. Without it (or without the playwright package) a test
skips with the reason, except under ``CI=true``, where tests/run.sh installs
it and its absence fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support.cli import MNEMOLOG
from support.postgres import in_ci

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-output" / "web"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _missing(reason: str) -> None:
    if in_ci():
        pytest.fail(f"CI is set: {reason} (tests/run.sh installs it under CI=true)", pytrace=False)
    pytest.skip(reason)


def chromium_path() -> str:
    """The system Chromium's executable (skip, or fail under CI, when it is not installed)."""
    for candidate in (os.environ.get("MNEMOLOG_TEST_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and Path(candidate).is_file():
            return candidate
    _missing("Debian's chromium is not installed (apt-get install chromium)")
    raise AssertionError("unreachable")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium browser, closed afterwards."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=list(CHROMIUM_FLAGS), headless=True)
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> Path:
    """Save the page, whole, as test-output/web/NAME.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    return target


@contextmanager
def served(env: dict[str, str], *args: str) -> Iterator[str]:
    """``mnemolog serve --port 0 ARGS`` in a real process; its URL (from what it prints) until the block ends."""
    with serving(env, *args) as (url, _):
        yield url


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[tuple[str, int]]:
    """As ``served``, with the server's process id (to watch its memory)."""
    full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    process = subprocess.Popen(
        [MNEMOLOG, "serve", "--port", "0", *args], env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.search(r"(http://\S+)", first)
        if not found:
            process.kill()
            raise AssertionError(f"serve printed no URL: {first!r} {process.stderr.read() if process.stderr else ''}")
        yield found.group(1), process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
