"""Render a transcript compactly for a phase-1 model, under a token budget.

Codex sends the kept response items as one JSON array and, when that is too
long, cuts the middle. Long tool outputs dominate that cost, so this renderer
works item by item instead:

1. one short block per item, with a header naming the role or tool, the call
   id and the exit code; an output identical to an earlier one becomes
   ``[same output as call X]``; tool calls and outputs are always cut to
   their first and last lines plus every error line (``_RESTING``);
2. if that is over budget, long tool calls, tool outputs and assistant
   messages are cut to a head and a tail at ever tighter levels, with a
   ``[… n lines trimmed …]`` marker, keeping every line that looks like an
   error (``error``, ``Error``, ``Traceback``, ``FAILED``, ...);
3. if still over, whole blocks that are neither user messages nor errors are
   dropped from the middle of the session outwards;
4. only then, as a last resort, the middle of the text is cut by tokens.

User messages are never shortened before step 4. Tokens are counted with the
real o200k_base tokenizer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemolog.adapters.tokens import count_tokens, tail_to_tokens, truncate_to_tokens
from mnemolog.domain.transcript import ItemKind, Transcript, TranscriptItem

__all__ = [
    "ERROR_LINE",
    "RenderedInput",
    "plain_codex_items",
    "plain_codex_tokens",
    "plain_codex_tokens_from_file",
    "render_for_model",
]

ERROR_LINE = re.compile(r"error|Error|ERROR|Traceback|FAILED|Exception|panic:|fatal:")

# (head lines, tail lines, max chars a line) per trimming level, loosest first.
_LEVELS: tuple[tuple[int, int, int], ...] = (
    (80, 40, 2000),
    (30, 20, 600),
    (12, 8, 300),
    (5, 3, 200),
    (2, 1, 120),
    (1, 0, 80),
)
# Tool calls and outputs are always cut to this (head lines, tail lines, max chars a line), budget or
# not: a phase-1 model learns what a command showed from its ends and its error lines, and Codex's
# plain serialisation sends them whole (issue 15: at most 0.6 of its tokens).
_RESTING: tuple[int, int, int] = (24, 12, 400)
_ERROR_LINE_CHARS = 1000
_SHORT_CALL_ID = 8  # longer call ids are shown as the number of the item that first named them
_MIN_COLLAPSE_CHARS = 80  # shorter repeated outputs are cheaper to repeat than to reference
_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class RenderedInput:
    """The text a model will read and its size in tokens.

    ``level`` is 0 when nothing was trimmed, then the trimming level reached;
    ``dropped_items`` counts whole blocks left out; ``cut_tokens`` is non-zero
    only when the last-resort middle cut happened.
    """

    text: str
    tokens: int
    level: int = 0
    dropped_items: int = 0
    cut_tokens: int = 0


@dataclass
class _Block:
    index: int
    item: TranscriptItem
    header: str
    body: str
    essential: bool
    trimmable: bool

    def render(self, body: str | None = None) -> str:
        text = self.body if body is None else body
        return f"{self.header}\n{text}" if text else self.header


def _is_error_item(item: TranscriptItem) -> bool:
    return item.is_error or (item.exit_code is not None and item.exit_code != 0)


def _header(number: int, item: TranscriptItem, call: str | None = None, follows_call: bool = False) -> str:
    """``[N] user:``, ``[N] call TOOL:``, ``[N] output:`` (right after its call) or ``[N] output of #M:``."""
    if item.kind is ItemKind.USER:
        return f"[{number}] user:"
    if item.kind is ItemKind.ASSISTANT:
        return f"[{number}] assistant:"
    if item.kind is ItemKind.TOOL_CALL:
        parts = [f"[{number}]", "call"]
        if item.tool:
            parts.append(item.tool)
        if item.call_id and call != f"#{number}":
            parts.append(f"(call {call or item.call_id})")
    else:
        parts = [f"[{number}]", "output"]
        if not follows_call:
            if item.tool:
                parts.append(item.tool)
            if item.call_id:
                parts.append(f"of {call or item.call_id}")
    if item.exit_code is not None:
        parts.append(f"exit={item.exit_code}")
    if item.is_error:
        parts.append("ERROR")
    return " ".join(parts) + ":"


def _blocks(transcript: Transcript) -> list[_Block]:
    seen_outputs: dict[str, str] = {}
    calls: dict[str, str] = {}  # a long call id -> "#N", N the item that first named it (ids cost ~10 tokens)
    blocks: list[_Block] = []
    previous: TranscriptItem | None = None
    for index, item in enumerate(transcript.items):
        number = index + 1
        body = item.text.strip("\n")
        call = None
        if item.call_id:
            call = calls.setdefault(item.call_id, f"#{number}" if len(item.call_id) > _SHORT_CALL_ID else item.call_id)
        if item.kind is ItemKind.TOOL_CALL:
            body = _compact_call(body)
        elif item.kind is ItemKind.TOOL_OUTPUT:
            body = _compact_output(body, item)
            if len(body) >= _MIN_COLLAPSE_CHARS:
                if body in seen_outputs:
                    body = f"[same output as {seen_outputs[body]}]"
                else:
                    seen_outputs[body] = f"call {call}" if call else f"item {number}"
        follows_call = (
            item.kind is ItemKind.TOOL_OUTPUT
            and previous is not None
            and previous.kind is ItemKind.TOOL_CALL
            and bool(item.call_id)
            and previous.call_id == item.call_id
        )
        previous = item
        blocks.append(
            _Block(
                index=index,
                item=item,
                header=_header(number, item, call, follows_call),
                body=body,
                essential=item.kind is ItemKind.USER or _is_error_item(item),
                trimmable=item.kind is not ItemKind.USER,
            )
        )
    return blocks


def _compact_call(body: str) -> str:
    """A tool call's JSON arguments as ``name: value`` lines, strings unquoted and unescaped.

    The JSON's quotes, braces and escapes cost tokens and tell a model nothing; anything that
    is not a JSON object stays as it was.
    """
    if not body.startswith("{"):
        return body
    try:
        arguments = json.loads(body)
    except ValueError:
        return body
    if not isinstance(arguments, dict) or not arguments:
        return body
    if "command" in arguments:
        # Claude Code's Bash ``description`` is the agent's label of the command for its UI: the
        # command itself says it.
        arguments.pop("description", None)
    if len(arguments) == 1:  # one argument (a command, a path): the tool's name says what it is
        (value,) = arguments.values()
        return value if isinstance(value, str) else _dumps(value)
    lines = []
    for name, value in arguments.items():
        shown = value if isinstance(value, str) else _dumps(value)
        lines.append(f"{name}:\n{shown}" if "\n" in shown else f"{name}: {shown}")
    return "\n".join(lines)


# Claude Code's Read shows each line as ``<spaces><number>→<line>`` (cat -n): the numbers are noise.
_LINE_NUMBER = re.compile(r"^ *\d+\u2192", re.MULTILINE)


def _compact_output(body: str, item: TranscriptItem) -> str:
    """A tool output without what the header already says (``Exit code N``), line-number gutters
    and column padding. Error lines stay exactly as the tool printed them.
    """
    if item.exit_code is not None and body.startswith(f"Exit code {item.exit_code}\n"):
        body = body[len(f"Exit code {item.exit_code}\n") :]
    numbered = "\u2192" in body and _LINE_NUMBER.match(body) is not None
    if numbered or "  " in body:
        body = "\n".join(_compact_line(line, numbered) for line in body.split("\n"))
    return body


_GAP = re.compile(r"(?<=\S)  +(?=\S)")


def _compact_line(line: str, numbered: bool) -> str:
    """A line without its line-number gutter, its inner runs of spaces (columns) cut to one.

    Indentation stays; an error line stays as printed.
    """
    if ERROR_LINE.search(line):
        return line
    if numbered:
        line = _LINE_NUMBER.sub("", line, count=1)
    return _GAP.sub(" ", line) if "  " in line else line


def _cap_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    head = max(limit * 3 // 4, 1)
    tail = max(limit - head, 0)
    cut = len(line) - head - tail
    return f"{line[:head]}[… {cut} chars trimmed …]{line[len(line) - tail :] if tail else ''}"


def _marker(count: int) -> str:
    return f"[… {count} line{'s' if count != 1 else ''} trimmed …]"


def trim_text(text: str, head: int, tail: int, line_chars: int) -> str:
    """Keep ``head`` and ``tail`` lines and every error-looking line between them.

    Lines longer than ``line_chars`` are cut in their middle (error lines get
    a larger allowance). Identical consecutive error lines are kept once.
    """
    lines = text.split("\n")
    if len(lines) <= head + tail + 1:
        return "\n".join(_cap_line(line, _limit(line, line_chars)) for line in lines)
    out = [_cap_line(line, line_chars) for line in lines[:head]]
    middle = lines[head : len(lines) - tail]
    skipped = 0
    previous_error: str | None = None
    for line in middle:
        if ERROR_LINE.search(line) and line != previous_error:
            if skipped:
                out.append(_marker(skipped))
                skipped = 0
            out.append(_cap_line(line, _ERROR_LINE_CHARS))
            previous_error = line
        else:
            skipped += 1
    if skipped:
        out.append(_marker(skipped))
    out.extend(_cap_line(line, _limit(line, line_chars)) for line in lines[len(lines) - tail :])
    return "\n".join(out)


def _limit(line: str, line_chars: int) -> int:
    return max(line_chars, _ERROR_LINE_CHARS) if ERROR_LINE.search(line) else line_chars


def _bodies_at_level(blocks: list[_Block], level: int) -> list[str]:
    if level == 0:
        return [
            trim_text(block.body, *_RESTING) if block.trimmable and block.item.kind is not ItemKind.ASSISTANT else block.body
            for block in blocks
        ]
    head, tail, line_chars = _LEVELS[level - 1]
    bodies = []
    for block in blocks:
        if not block.trimmable:
            bodies.append(block.body)
        elif block.item.kind is ItemKind.ASSISTANT:
            bodies.append(trim_text(block.body, head * 2, tail * 2, line_chars * 2))
        else:
            bodies.append(trim_text(block.body, head, tail, line_chars))
    return bodies


def _join(parts: Iterable[str]) -> str:
    return _SEPARATOR.join(parts)


def _drop_middle(
    blocks: list[_Block], rendered: list[str], sizes: list[int], budget: int
) -> tuple[str, int]:
    """Drop non-essential blocks, nearest the middle first, until the estimate fits."""
    total = sum(sizes) + len(sizes)
    centre = (len(blocks) - 1) / 2
    order = sorted(
        (i for i, block in enumerate(blocks) if not block.essential),
        key=lambda i: (abs(i - centre), i),
    )
    dropped: set[int] = set()
    for i in order:
        if total <= budget:
            break
        dropped.add(i)
        total -= sizes[i] + 1
    parts: list[str] = []
    run = 0
    for i, text in enumerate(rendered):
        if i in dropped:
            run += 1
            continue
        if run:
            parts.append(f"[… {run} item{'s' if run != 1 else ''} omitted …]")
            run = 0
        parts.append(text)
    if run:
        parts.append(f"[… {run} item{'s' if run != 1 else ''} omitted …]")
    return _join(parts), len(dropped)


def _cut_middle(text: str, budget: int) -> tuple[str, int]:
    total = count_tokens(text)
    marker_reserve = 24  # the marker line plus tokens merged across the two seams
    keep = max(budget - marker_reserve, 2)
    head = truncate_to_tokens(text, keep // 2)
    tail = tail_to_tokens(text, keep - keep // 2)
    cut = max(total - count_tokens(head) - count_tokens(tail), 0)
    return f"{head}\n[… {cut} tokens truncated …]\n{tail}", cut


def render_for_model(transcript: Transcript, budget_tokens: int) -> RenderedInput:
    """Render ``transcript`` for a model in at most ``budget_tokens`` tokens.

    See the module docstring for the order in which content gives way.
    """
    if budget_tokens <= 0:
        raise ValueError("budget_tokens must be positive")
    blocks = _blocks(transcript)
    if not blocks:
        return RenderedInput(text="", tokens=0)

    rendered: list[str] = []
    sizes: list[int] = []
    for level in range(len(_LEVELS) + 1):
        bodies = _bodies_at_level(blocks, level)
        rendered = [block.render(body) for block, body in zip(blocks, bodies, strict=True)]
        sizes = [count_tokens(text) for text in rendered]
        if sum(sizes) + len(sizes) <= budget_tokens:
            text = _join(rendered)
            tokens = count_tokens(text)
            if tokens <= budget_tokens:
                return RenderedInput(text=text, tokens=tokens, level=level)

    level = len(_LEVELS)
    droppable = sum(1 for block in blocks if not block.essential)
    margin = 0
    while True:
        text, dropped = _drop_middle(blocks, rendered, sizes, budget_tokens - margin)
        tokens = count_tokens(text)
        if tokens <= budget_tokens:
            return RenderedInput(text=text, tokens=tokens, level=level, dropped_items=dropped)
        if dropped >= droppable:
            break
        margin = max(margin * 2, 16)

    text, cut = _cut_middle(text, budget_tokens)
    tokens = count_tokens(text)
    if tokens > budget_tokens:  # a tiny budget: the marker itself does not fit
        text = truncate_to_tokens(text, budget_tokens)
        tokens = count_tokens(text)
    return RenderedInput(
        text=text, tokens=tokens, level=level, dropped_items=dropped, cut_tokens=cut
    )


# --- Codex's plain serialisation, for comparison -------------------------------------------


def _codex_item(item: TranscriptItem) -> dict[str, Any]:
    if item.kind is ItemKind.USER:
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": item.text}],
        }
    if item.kind is ItemKind.ASSISTANT:
        return {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": item.text}],
        }
    if item.kind is ItemKind.TOOL_CALL:
        return {
            "type": "function_call",
            "name": item.tool or "",
            "arguments": item.text,
            "call_id": item.call_id or "",
        }
    output: str = item.text
    if item.exit_code is not None:
        output = _dumps({"output": item.text, "metadata": {"exit_code": item.exit_code}})
    return {"type": "function_call_output", "call_id": item.call_id or "", "output": output}


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def plain_codex_items(transcript: Transcript) -> str:
    """The transcript's items as Codex would send them: one compact JSON array, untrimmed."""
    return _dumps([_codex_item(item) for item in transcript.items])


def plain_codex_tokens(transcript: Transcript) -> int:
    """Tokens of :func:`plain_codex_items` with the same tokenizer as :func:`render_for_model`."""
    tokens: int = count_tokens(plain_codex_items(transcript))
    return tokens


_KEPT_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    }
)


def _is_injected_part(part: object) -> bool:
    if not isinstance(part, dict):
        return False
    text = str(part.get("text", "")).strip().lower()
    return (text.startswith("# agents.md instructions") and text.endswith("</instructions>")) or (
        text.startswith("<skill>") and text.endswith("</skill>")
    )


def _keep_codex_item(payload: dict[str, Any]) -> dict[str, Any] | None:
    kind = payload.get("type")
    if kind not in _KEPT_TYPES:
        return None
    if kind == "message":
        if payload.get("role") == "developer":
            return None
        if payload.get("role") == "user" and isinstance(payload.get("content"), list):
            content = [part for part in payload["content"] if not _is_injected_part(part)]
            payload = {**payload, "content": content}
    return payload


def _jsonl_lines(path: Path) -> Iterator[str]:
    if path.suffix == ".zst":
        import io

        import zstandard

        with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as reader:
            yield from io.TextIOWrapper(reader, encoding="utf-8", errors="replace")
    else:
        with path.open(encoding="utf-8", errors="replace") as handle:
            yield from handle


def plain_codex_tokens_from_file(path: str | Path) -> int:
    """Tokens of the JSON array Codex's phase 1 builds from a rollout file (before its own cut).

    Reads ``*.jsonl`` or ``*.jsonl.zst``; keeps the response items Codex keeps
    (dropping reasoning, developer messages, injected AGENTS.md and skill
    parts, ghost snapshots and unknown types); lines that do not parse are
    skipped. Legacy (envelope-less) rollouts are read too.
    """
    kept: list[dict[str, Any]] = []
    for line in _jsonl_lines(Path(path)):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("type") == "response_item" and isinstance(record.get("payload"), dict):
            payload = record["payload"]
        elif "payload" not in record and "record_type" not in record:
            payload = record  # legacy: bare response items
        else:
            continue
        item = _keep_codex_item(payload)
        if item is not None:
            kept.append(item)
    tokens: int = count_tokens(_dumps(kept))
    return tokens
