"""Forget variants: a value hidden by invisible characters, compatibility forms, line breaks, or in a cwd or branch.

The rule-level cases run the matcher on every variant (the value as stored
text and as typed by the user); the end-to-end case records sessions that
carry the value in each of those shapes and places, forgets it once, and
reads back the folder, the context, search and the views: 0 leaks. The
check is independent of the matcher: text is NFKC-folded, case-folded and
stripped of everything but letters and digits before looking for the value.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from pathlib import Path

import pytest
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.store import open_store
from mnemolog.domain.tombstone_matcher import TombstoneMatcher, TombstoneRule, fingerprint
from support.cli import run_cli

VALUE = "Orion Falcon 7731"
SQUASHED = "orionfalcon7731"
ZW = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")


def squash(text: str) -> str:
    """Letters and digits only, NFKC- and case-folded (invisible characters gone)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", "", folded)


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\u3000" if c == " " else c for c in text)


def variants() -> dict[str, str]:
    """The value written in every disguise the matcher must see through."""
    out = {"plain": VALUE, "upper": VALUE.upper()}
    for mark in ZW:
        out[f"U+{ord(mark):04X} inside every word"] = " ".join(w[:2] + mark + w[2:] for w in VALUE.split())
        out[f"U+{ord(mark):04X} between every letter"] = mark.join(VALUE)
    out["fullwidth"] = fullwidth(VALUE)
    out["fullwidth beside a ligature"] = "\ufb01le " + fullwidth(VALUE)
    out["mixed fullwidth, zero-width, soft hyphen"] = "Ｏｒi\u200bon Fal\u00adcon ７７3１"
    out["mixed with a ligature in the same word"] = "\ufb03 Ｏr\u200dion Falcon 7731"
    out["line break between words"] = "Orion\nFalcon\r\n7731"
    out["word broken across lines"] = "Ori\non Falcon 7731"
    out["word hyphenated across lines"] = "Ori-\non Fal-\r\ncon 7731"
    out["wrapped with indent"] = "Orion Fal-\n    con 7731"
    out["in a path"] = "/home/dev/orion-falcon-7731/app"
    out["in a branch"] = "feature/orion_falcon_7731"
    return out


def _matcher(value: str) -> TombstoneMatcher:
    digest, width = fingerprint(b"key", value)
    return TombstoneMatcher(b"key", [TombstoneRule(uuid.uuid4(), digest, width, "global")])


@pytest.mark.parametrize("name", list(variants()))
def test_the_matcher_sees_through_each_variant(name: str) -> None:
    text = f"before {variants()[name]} after"
    assert SQUASHED not in squash(_matcher(VALUE).scrub(text, "global")[0])
    # ... and the user may type the disguised form to forget the plain one.
    if not any(word in name for word in ("path", "branch", "ligature", "across lines", "wrapped")):  # other words, or a typed line break
        assert _matcher(variants()[name]).contains(f"the {VALUE} here", "global")


def _rollout(folder: Path, n: int, text: str, cwd: str = "/home/dev/api", branch: str = "main") -> None:
    thread = f"019e{n:04x}-0000-7000-8000-{n:012x}"
    when = "2026-11-03T10:00:00.000Z"
    meta = {"id": thread, "timestamp": when, "cwd": cwd, "source": "cli", "cli_version": "0.130.0",
            "git": {"branch": branch, "repository_url": "git@github.com:acme/api.git"}}
    lines = [
        {"timestamp": when, "type": "session_meta", "payload": meta},
        {"timestamp": when, "type": "event_msg", "payload": {"type": "user_message", "message": text}},
        {"timestamp": when, "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
        {"timestamp": when, "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"Noted: {text}"}]}},
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"rollout-2026-11-03T10-00-00-{thread}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_forget_reaches_every_variant_and_place(tmp_path: Path) -> None:
    folder, home, out = tmp_path / "sessions", tmp_path / "home", tmp_path / "memories"
    shapes = variants()
    for n, (name, shape) in enumerate(shapes.items(), start=1):
        if name == "in a path":
            _rollout(folder, n, "Always run make check before pushing.", cwd=shape)
        elif name == "in a branch":
            _rollout(folder, n, "Always run make lint before pushing.", branch=shape)
        else:
            _rollout(folder, n, f"Remember the deploy codename {shape} for staging.")
    env = {"MNEMOLOG_HOME": str(home), "MNEMOLOG_EXTRACT_MODEL": "heuristic",
           "MNEMOLOG_CONSOLIDATE_MODEL": "heuristic", "MNEMOLOG_MEMORY_DIR": str(out)}
    ran = run_cli("run", str(folder), "--all", "--json", env=env)
    assert ran.code == 0, ran.err
    before = "".join(p.read_text() for p in out.rglob("*.md"))
    assert SQUASHED in squash(before)  # the value was there to forget

    forgot = run_cli("forget", VALUE, "--json", env=env)
    assert forgot.code == 0, forgot.err

    texts = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.md")}
    texts["context"] = run_cli("context", "--project", "git:github.com/acme/api", env=env).out
    texts["search"] = run_cli("search", "codename staging", "--project", "git:github.com/acme/api", "--json", env=env).out
    store = open_store(Settings(home=home))
    try:
        store.catch_up()
        texts["views"] = json.dumps(store.reads().dump(), default=str)
    finally:
        store.close()
    leaks = [where for where, text in texts.items() if SQUASHED in squash(text)]
    assert leaks == []
