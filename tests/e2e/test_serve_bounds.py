"""`mnemolog serve` refuses oversized bodies (issue 28, acceptance 4): a 300 MB POST to any route is a 413 before the server grows by 10 MB.

A real server process and a raw socket: the body is streamed in 1 MB chunks
(never held whole by the test), declared by its Content-Length or sent
chunked with no length at all. The test stops sending as soon as the server
answers, or as soon as the server has grown by the limit (the old behaviour:
it read everything), so a regression fails fast instead of eating memory.
"""

from __future__ import annotations

import re
import select
import socket
import time
import urllib.request
from pathlib import Path

import pytest
from support.browser import serving

MB = 1024 * 1024
HUGE = 300 * MB
GROWTH_LIMIT = 10 * MB
CHUNK = b"a" * MB
POSTS = (
    "/items/00000000/review",
    "/items/00000000/edit",
    "/items/00000000/pin",
    "/items/00000000/scope",
    "/forget/preview",
    "/forget",
    "/tombstones/00000000/lift",
)
GETS = ("/", "/items")


def rss(pid: int) -> int:
    """The process's resident memory, in bytes (Linux /proc)."""
    found = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    assert found, "no VmRSS for the server process"
    return int(found.group(1)) * 1024


def huge_request(port: int, method: str, path: str, csrf: str, *, chunked: bool, pid: int, ceiling: int) -> tuple[int | None, int]:
    """Send a 300 MB form body to ``path``; the status the server answered (None: none) and the highest RSS seen."""
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {HUGE}"
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"{framing}\r\nConnection: close\r\n\r\n"
    ).encode()
    first = f"csrf_token={csrf}&text=".encode()
    peak = rss(pid)
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head)
        sent = 0
        try:
            while sent < HUGE:
                piece = first + CHUNK[len(first):] if sent == 0 else CHUNK
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                sent += len(piece)
                peak = max(peak, rss(pid))
                if peak > ceiling or select.select([sock], [], [], 0)[0]:
                    break  # answered (or grown past the limit: no use sending more)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed while the body was still coming
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline and b"\r\n" not in answer:
                if not select.select([sock], [], [], 1)[0]:
                    if peak > ceiling:
                        break
                    continue
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
        except ConnectionResetError:
            pass
        peak = max(peak, rss(pid))
    status = re.match(rb"HTTP/1\.1 (\d{3})", answer)
    return (int(status.group(1)) if status else None), peak


def test_a_300_mb_body_to_any_route_is_refused_with_413_before_the_server_grows_by_10_mb(tmp_path: Path) -> None:
    with serving({"MNEMOLOG_HOME": str(tmp_path / "data")}) as (url, pid):
        port = int(url.rsplit(":", 1)[1].strip("/"))
        for path in (*GETS, "/review", "/forget"):  # warm up: every page's code loaded before the baseline
            with urllib.request.urlopen(url.rstrip("/") + path, timeout=20) as page:  # loopback: the server this test started
                html = page.read().decode()
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', html)
        assert csrf, "the forget page has a CSRF field"
        baseline = rss(pid)
        ceiling = baseline + GROWTH_LIMIT
        started = time.monotonic()
        for method, path in [*(("POST", p) for p in POSTS), *(("GET", p) for p in GETS)]:
            for chunked in (False, True):
                status, peak = huge_request(port, method, path, csrf.group(1), chunked=chunked, pid=pid, ceiling=ceiling)
                how = "chunked" if chunked else "with its Content-Length"
                assert peak - baseline < GROWTH_LIMIT, f"{method} {path} ({how}): the server grew by {(peak - baseline) // MB} MB"
                assert status == 413, f"{method} {path} ({how}): answered {status}, not 413"
        assert time.monotonic() - started < 120
        with urllib.request.urlopen(url, timeout=20) as page:  # and it still serves
            assert page.status == 200


@pytest.mark.parametrize("host", ["127.0.0.1:{port}, evil.example", "evil.example, 127.0.0.1:{port}", "127.0.0.1:{port} evil.example", "127.0.0.1:{port}@evil.example"])
def test_a_host_header_naming_more_than_one_host_is_refused(tmp_path: Path, host: str) -> None:
    with serving({"MNEMOLOG_HOME": str(tmp_path / "data")}) as (url, _):
        port = int(url.rsplit(":", 1)[1].strip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
            sock.sendall(f"GET / HTTP/1.1\r\nHost: {host.format(port=port)}\r\nConnection: close\r\n\r\n".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
