"""`mnemolog serve` as a process: the URL it prints answers, a token is enforced, --open opens it, a taken port is one error line."""

from __future__ import annotations

import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from support.browser import served
from support.cli import spawn_cli

TOKEN = "a-token-long-enough-for-serve-0123456789"


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # loopback only: the server these tests started
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_serve_prints_a_loopback_url_that_answers(tmp_path: Path) -> None:
    with served({"MNEMOLOG_HOME": str(tmp_path / "data")}) as url:
        assert url.startswith("http://127.0.0.1:")
        status, html = get(url)
        assert status == 200 and "<h1>Projects</h1>" in html
        status, _ = get(url + "static/style.css")
        assert status == 200


def test_with_a_token_every_request_must_carry_it(tmp_path: Path) -> None:
    with served({"MNEMOLOG_HOME": str(tmp_path / "data")}, "--token", TOKEN) as url:
        assert url.endswith(f"?token={TOKEN}")
        base = url.split("?", 1)[0]
        assert get(base)[0] == 401
        assert get(base + "items", {"Authorization": f"Bearer {TOKEN}"})[0] == 200


def test_open_opens_the_url_in_the_browser(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = f"{sys.executable} -c \"import sys; open({str(opened)!r}, 'w').write(sys.argv[1])\" %s"
    with served({"MNEMOLOG_HOME": str(tmp_path / "data"), "BROWSER": browser}, "--open") as url:
        deadline = time.monotonic() + 10
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert opened.read_text() == url


def test_a_port_in_use_is_one_error_line(tmp_path: Path) -> None:
    env = {"MNEMOLOG_HOME": str(tmp_path / "data")}
    with served(env) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        taken = spawn_cli("serve", "--port", port, env=env, timeout=30)
    assert taken.code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in taken.err and "Traceback" not in taken.err
