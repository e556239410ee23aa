"""Synthetic memory for the benchmarks: many items with a skewed vocabulary (common and rare words)."""

from __future__ import annotations

import random
from pathlib import Path

from mnemolog.adapters.store import Store

from support.memory import item

PROJECT = "git:example.com/acme/api"
OTHER = "git:example.com/acme/billing"
_SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "de", "fo", "gi", "ha", "ju"]
VOCABULARY = [a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES[:8]]  # 2,048 words
COMMON = VOCABULARY[0]  # in nearly every item
MEDIUM = VOCABULARY[40]
RARE = VOCABULARY[-1]


def _word(rng: random.Random) -> str:
    return VOCABULARY[int(len(VOCABULARY) * rng.random() ** 4)]  # a Zipf-like skew


def item_texts(n: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """(scope, title, text) of ``n`` items: two thirds in PROJECT, the rest global or OTHER."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        scope = PROJECT if k % 3 else ("global" if k % 2 else OTHER)
        words = [_word(rng) for _ in range(24)]
        out.append((scope, f"Module {k} {words[0]}", f"When touching {k}: " + " ".join(words[1:]) + "."))
    return out


def fill(store: Store, n: int, batch: int = 1000) -> list[tuple[str, str, str]]:
    """Save ``n`` items (in batches) and catch the views up; their (scope, title, text)."""
    texts = item_texts(n)
    for start in range(0, n, batch):
        store.app.save_all(*[item(s, text, title=title) for s, title, text in texts[start : start + batch]])
    store.catch_up()
    return texts


def write_grep_file(texts: list[tuple[str, str, str]], path: Path) -> Path:
    """The same items as lines of a text file, for the ``grep -ri`` baseline."""
    path.write_text("".join(f"{scope}\t{title}\t{text}\n" for scope, title, text in texts))
    return path


def write_grep_folder(texts: list[tuple[str, str, str]], folder: Path, per_folder: int = 1000) -> Path:
    """The same items as one Markdown file each (a notes folder), for ``grep -ri`` across files."""
    for n, (scope, title, text) in enumerate(texts):
        sub = folder / f"{n // per_folder:04d}"
        if n % per_folder == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"{n:06d}.md").write_text(f"# {title}\n\nscope: {scope}\n\n{text}\n")
    return folder
