"""Which parts of an event are sealed text, and how a stored state holds them.

Text that came from a person or a session (transcripts, extractions, item and
note texts, model-written reasons) is stored sealed: encrypted under a data
key of the aggregate it belongs to, a key kept outside the log (the
``DataKeys`` port). Destroying an aggregate's keys makes every event it ever
recorded unreadable where that text was (crypto-shredding), while the rest of
each event (ids, times, kinds, counts) stays readable, so the log still
replays and the views still rebuild.

An event class names its sealed fields in ``sealed`` as dotted paths into its
JSON form: ``"text"``, ``"facts.first_user_message"``, ``"keywords.*"`` (each
element of a list), ``"transcript.*.text"``. A stored state keeps
``ERASED`` in place of every sealed string and the strings themselves,
encrypted, under ``SEALED_KEY``; opening it puts them back, or leaves
``ERASED`` when the key is gone. Nothing here knows how encryption is done.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_core import from_json

ERASED = "[erased]"  # what a sealed text reads as once its key is destroyed
SEALED_KEY = "_sealed"  # where a stored state keeps its sealed strings


def _slots(state: Any, path: Sequence[str], out: list[tuple[Any, Any]]) -> None:
    """Append (container, key) of every non-empty string a path reaches to ``out``, in a stable order."""
    if not path:
        return
    head, rest = path[0], path[1:]
    keys: Sequence[Any]
    if head == "*":
        keys = range(len(state)) if isinstance(state, list) else ()
    elif isinstance(state, dict):
        keys = (head,) if head in state else ()
    elif isinstance(state, list) and head.isdigit() and int(head) < len(state):
        keys = (int(head),)
    else:
        keys = ()
    for key in keys:
        value = state[key]
        if rest:
            _slots(value, rest, out)
        elif isinstance(value, str) and value:
            out.append((state, key))


_SPLIT: dict[str, tuple[str, ...]] = {}


def slots(state: dict[str, Any], paths: Sequence[str]) -> list[tuple[Any, Any]]:
    """Every sealed string of a JSON state: (container, key) pairs, path by path."""
    out: list[tuple[Any, Any]] = []
    for path in paths:
        parts = _SPLIT.get(path)
        if parts is None:
            parts = _SPLIT[path] = tuple(path.split("."))
        _slots(state, parts, out)
    return out


def sealed_texts(state: dict[str, Any], paths: Sequence[str]) -> list[str]:
    """The sealed strings of a JSON state, in order."""
    return [container[key] for container, key in slots(state, paths)]


def seal_state(
    state: dict[str, Any], paths: Sequence[str], encrypt: Callable[[bytes], dict[str, str]]
) -> dict[str, Any]:
    """``state`` with its sealed strings replaced by ``ERASED`` and stored, encrypted, under ``SEALED_KEY``.

    ``encrypt`` turns the JSON of the strings into a small JSON-ready dict
    (which key, the ciphertext). A state with nothing to seal is returned as is.
    """
    found = slots(state, paths)
    if not found:
        return state
    texts = [container[key] for container, key in found]
    for container, key in found:
        container[key] = ERASED
    state[SEALED_KEY] = encrypt(json.dumps(texts, ensure_ascii=False).encode())
    return state


def open_state(
    state: dict[str, Any], paths: Sequence[str], decrypt: Callable[[dict[str, str]], bytes | None]
) -> dict[str, Any]:
    """``state`` with its sealed strings put back (``ERASED`` stays where ``decrypt`` has no key)."""
    sealed = state.pop(SEALED_KEY, None)
    if sealed is None:
        return state
    plain = decrypt(sealed)
    if plain is None:
        return state  # the key was destroyed: every sealed string reads ERASED
    texts = from_json(plain)
    for (container, key), text in zip(_opened_slots(state, paths), texts, strict=False):
        container[key] = text
    return state


_PLANS: dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _opened_slots(state: dict[str, Any], paths: Sequence[str]) -> list[tuple[Any, Any]]:
    """``slots(state, paths)``, the same pairs in the same order, for opening.

    A rebuild opens every sealed event, and most sealed paths name a field that
    is absent or empty in most events (no skill, no spans): a field's value is
    looked at once, and only a non-empty one is walked.
    """
    key = tuple(paths)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = tuple((parts[0], parts[1:]) for parts in (tuple(p.split(".")) for p in paths))
    out: list[tuple[Any, Any]] = []
    for head, rest in plan:
        if head == "*" or head not in state:  # a state is a dict: "*" reaches nothing in it
            continue
        value = state[head]
        if not value:
            continue  # None, "", [] or {}: no non-empty string below
        if not rest:
            if isinstance(value, str):
                out.append((state, head))
        else:
            _slots(value, rest, out)
    return out


def sealed_paths(event_class: type) -> tuple[str, ...]:
    """The sealed fields an event class names (none for most)."""
    paths: tuple[str, ...] = getattr(event_class, "sealed", ())
    return paths
