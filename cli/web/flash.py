"""What a write said, kept on the server for the page its redirect names: the redirect carries a random id, never the words.

A message may hold what a person typed (a value to forget, an edit's text, a
scope). In a URL it would reach the address bar, the browser's history and
any referrer; here it stays in the server's memory until that page shows it
once (or for ``KEEP_SECONDS``, at most ``KEEP`` messages).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

KEEP = 256
KEEP_SECONDS = 300.0
PARAM = "said"  # the query parameter naming a message


@dataclass(frozen=True)
class Flash:
    """What a write did (``done``) or why it did not (``problem``), and the item it acted on ('' when none)."""

    done: str = ""
    problem: str = ""
    item: str = ""


class Flashes:
    """The messages waiting for their page (thread-safe: pages run in a thread pool)."""

    def __init__(self, keep: int = KEEP, seconds: float = KEEP_SECONDS) -> None:
        self.keep = keep
        self.seconds = seconds
        self._waiting: OrderedDict[str, tuple[float, Flash]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, flash: Flash) -> str:
        """Keep ``flash``; the random id its page is given."""
        key = secrets.token_urlsafe(16)
        with self._lock:
            self._waiting[key] = (time.monotonic() + self.seconds, flash)
            while len(self._waiting) > self.keep:
                self._waiting.popitem(last=False)
        return key

    def take(self, key: str) -> Flash:
        """The message of ``key``, once (an empty one when unknown, already shown or expired)."""
        with self._lock:
            until, flash = self._waiting.pop(key, (0.0, Flash()))
        return flash if until >= time.monotonic() else Flash()
