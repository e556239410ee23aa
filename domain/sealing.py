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

Two ways to seal, one stored form: ``seal_state`` works on the JSON form of
an event (a dict); ``seal_model`` reads the strings straight from the event
object, swaps them on a shallow copy and lets pydantic write the JSON (no
dict of the whole event, no ``json.dumps`` of it), giving the same document
(``tests/unit/test_sealing.py`` compares them); where it meets a value whose
JSON form it cannot tell from the object, it says so and the caller uses
``seal_state``. Opening reads either.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel
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


_PLANS: dict[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]] = {}


def slots(state: dict[str, Any], paths: Sequence[str]) -> list[tuple[Any, Any]]:
    """Every sealed string of a JSON state: (container, key) pairs, path by path.

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


class _Unknown(Exception):
    """A value on a sealed path whose JSON form ``seal_model`` does not derive from the object."""


_PLAIN = (int, float, bool, type(None))  # values whose JSON form is no string and nothing to walk into

_AS_IS: dict[type, bool] = {}


def _check_as_is(cls: type[BaseModel]) -> None:
    """Raise ``_Unknown`` unless ``cls``'s JSON is its fields under their own names, each as its value dumps.

    A serializer, a computed or excluded field or a serialization alias would make the
    JSON differ from the object the walk reads, so the texts would be sealed from one
    shape and put back into another.
    """
    plain = _AS_IS.get(cls)
    if plain is None:
        decorators = cls.__pydantic_decorators__
        plain = _AS_IS[cls] = not (
            decorators.field_serializers
            or decorators.model_serializers
            or cls.model_computed_fields
            or any(f.exclude or f.serialization_alias or f.alias for f in cls.model_fields.values())
        )
    if not plain:
        raise _Unknown(cls.__name__)


def _erase(value: Any, parts: tuple[str, ...], at: int, texts: list[str]) -> Any:
    """``value`` with the non-empty strings the path ``parts[at:]`` reaches set to ``ERASED`` (appended to ``texts``).

    The walk ``_slots`` makes over the JSON form, made over the object: a
    model's field, a tuple's or list's elements, a dict's keys. ``value``
    itself when nothing changed; raises ``_Unknown`` for a value whose JSON
    form could be a string the object does not show (a UUID, a date, an enum).
    """
    if at == len(parts):
        if type(value) is str:
            if value:
                texts.append(value)
                return ERASED
            return value
        if isinstance(value, (*_PLAIN, BaseModel, tuple, list, dict)):
            return value
        raise _Unknown(type(value).__name__)
    head = parts[at]
    if isinstance(value, BaseModel):
        _check_as_is(type(value))
        if head not in type(value).model_fields:
            return value
        child = getattr(value, head)
        new = _erase(child, parts, at + 1, texts)
        return value if new is child else value.model_copy(update={head: new})
    if isinstance(value, (tuple, list)):
        if head == "*":
            indexes: Sequence[int] = range(len(value))
        elif head.isdigit() and int(head) < len(value):
            indexes = (int(head),)
        else:
            return value
        items = list(value)
        changed = False
        for index in indexes:
            new = _erase(items[index], parts, at + 1, texts)
            if new is not items[index]:
                items[index], changed = new, True
        if not changed:
            return value
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, dict):
        if not all(type(key) is str for key in value):
            raise _Unknown("dict keys")
        if head == "*" or head not in value:
            return value
        new = _erase(value[head], parts, at + 1, texts)
        return value if new is value[head] else {**value, head: new}
    if type(value) is str or isinstance(value, _PLAIN):
        return value
    raise _Unknown(type(value).__name__)


_SEAL_PLANS: dict[tuple[type, tuple[str, ...]], tuple[tuple[str, tuple[str, ...]], ...]] = {}


def _plan(cls: type[BaseModel], paths: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The paths of a model class as (field, full parts), fields it lacks left out (their JSON has no such key)."""
    key = (cls, paths if isinstance(paths, tuple) else tuple(paths))
    plan = _SEAL_PLANS.get(key)
    if plan is None:
        fields = cls.model_fields
        plan = _SEAL_PLANS[key] = tuple((parts[0], parts) for parts in (tuple(p.split(".")) for p in paths) if parts[0] in fields)
    return plan


def _copy_with(model: BaseModel, update: dict[str, Any]) -> BaseModel:
    """A shallow copy of ``model`` with some fields replaced, unvalidated (``model_copy(update=...)`` without its bookkeeping)."""
    cls = type(model)
    copy = cls.__new__(cls)
    put = object.__setattr__
    put(copy, "__dict__", {**model.__dict__, **update})
    put(copy, "__pydantic_extra__", model.__pydantic_extra__)
    put(copy, "__pydantic_fields_set__", model.__pydantic_fields_set__)
    put(copy, "__pydantic_private__", model.__pydantic_private__)
    return copy


_quoted = json.encoder.encode_basestring  # a str as a JSON string (C), as json.dumps(..., ensure_ascii=False)


def seal_model(model: BaseModel, paths: Sequence[str], encrypt: Callable[[bytes], dict[str, str]]) -> bytes | None:
    """The stored JSON of ``model`` with its sealed strings sealed (what ``seal_state`` of its JSON form gives), or None.

    None: a sealed path reaches a value ``_erase`` cannot read (the caller
    seals the JSON form instead). A model with nothing to seal is its JSON.
    """
    texts: list[str] = []
    update: dict[str, Any] = {}
    values = model.__dict__
    try:
        _check_as_is(type(model))
        for head, parts in _plan(type(model), paths):
            child = update[head] if head in update else values[head]
            if len(parts) == 1:  # a field of the event itself: the common case, inline
                if type(child) is str:
                    if child:
                        texts.append(child)
                        update[head] = ERASED
                    continue
            elif child is None or (type(child) is tuple and not child):
                continue  # nothing below it
            new = _erase(child, parts, 1, texts)
            if new is not child:
                update[head] = new
    except _Unknown:
        return None
    if not texts:
        return model.model_dump_json().encode()
    document = _copy_with(model, update).model_dump_json()
    plain = ("[" + ",".join(map(_quoted, texts)) + "]").encode()
    sealed = ",".join(f"{_quoted(k)}:{_quoted(v)}" for k, v in encrypt(plain).items())
    return f'{document[:-1]},"{SEALED_KEY}":{{{sealed}}}}}'.encode()


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
    for (container, key), text in zip(slots(state, paths), texts, strict=False):
        container[key] = text
    return state


def sealed_paths(event_class: type) -> tuple[str, ...]:
    """The sealed fields an event class names (none for most)."""
    paths: tuple[str, ...] = getattr(event_class, "sealed", ())
    return paths
