"""How an item reads in the context an agent is served: one line each, whose tokens the views count when they project it.

A pure format rule, shared by the read use cases (``domain.services.read``) and
the views (``projections.memory_view.context_line_tokens``); its source is
fingerprinted with ``projections.schema.LINE_FORMAT`` (``tests/unit/test_line_format.py``).
"""

from __future__ import annotations

from mnemolog.domain.item_kinds import GLOBAL_SCOPE
from mnemolog.domain.project_names import project_label
from mnemolog.domain.reads import ItemRow

ITEM_MAX_WORDS = 60


def one_line(text: str) -> str:
    """``text`` on one line: whitespace collapsed, no forged ``[item:`` markers."""
    return " ".join(text.replace("[item:", "(item:").split())


def shorten(text: str, max_words: int) -> str:
    """``text`` on one line, cut after ``max_words`` words (an ellipsis says so)."""
    words = one_line(text).split(" ")
    return " ".join(words) if len(words) <= max_words else " ".join(words[:max_words]) + " …"


def context_line(item: ItemRow) -> str:
    """The line context shows for ``item`` to a reader of its own scope (or of any project, for a global item).

    The views count its tokens when they project the item (``ItemRow.context_tokens``).
    """
    return line_for(item, project_label(item.scope))


def line_for(item: ItemRow, label: str) -> str:
    """The line context shows for ``item`` to a reader whose project reads as ``label``."""
    title, text = one_line(item.title), shorten(item.text, ITEM_MAX_WORDS)
    if item.skill is not None and item.skill.steps:  # a skill shows its steps: the next session can follow them
        text = f"{text} Steps: " + "; ".join(f"`{one_line(c)}`" for c in item.skill.commands[:6])
    body = f"{title}: {text}" if title and text and not text.startswith(title) else (text or title)
    notes = ["global" if item.scope == GLOBAL_SCOPE else label]
    if item.pinned:
        notes.append("pinned")
    if item.trust != "proposed":
        notes.append(item.trust)
    if item.use_count:
        notes.append(f"used {item.use_count}x")
    return f"- [{item.kind}] {body} ({', '.join(notes)}) [item:{item.item_id}]"
