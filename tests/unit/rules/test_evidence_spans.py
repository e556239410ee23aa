"""Evidence spans: the lines of a session that support an item, quoted verbatim; the file line of each transcript item."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from mnemolog.adapters.transcript_lines import with_lines
from mnemolog.domain.evidence_spans import QUOTE_WORDS, locate_spans
from mnemolog.domain.tombstone_matcher import FORGOTTEN_MARK
from mnemolog.domain.transcript import ItemKind, SessionMeta, Transcript, TranscriptItem

from .builders import FAST, uid

S = uid("session")


def items(*texts: tuple[ItemKind, str]) -> tuple[TranscriptItem, ...]:
    return tuple(TranscriptItem(kind=kind, text=text, line=n + 10) for n, (kind, text) in enumerate(texts))


def test_the_best_supporting_lines_are_quoted_verbatim_with_their_file_lines() -> None:
    transcript = items(
        (ItemKind.ASSISTANT, "Done."),
        (ItemKind.USER, "Please always run make test-fast before you push.\nThanks!"),
        (ItemKind.TOOL_CALL, json.dumps({"command": ["bash", "-lc", "make test-fast"]})),
        (ItemKind.TOOL_OUTPUT, "12 passed in 0.3s"),
    )
    spans = locate_spans("Run `make test-fast` before pushing", S, transcript)
    assert [(s.item, s.line) for s in spans] == [(1, 11), (2, 12)]
    assert spans[0].quote == "make test-fast before" and spans[0].session_id == S
    assert spans[1].quote == "make test-fast"  # a tool call is quoted by its values, as the file holds them


def test_cut_and_redacted_lines_are_never_quoted_and_weak_matches_are_not_evidence() -> None:
    transcript = items(
        (ItemKind.USER, f"Deploy with {FORGOTTEN_MARK} on staging"),
        (ItemKind.USER, "The token is [REDACTED_SECRET] for staging deploys"),
        (ItemKind.USER, "staging is slow today"),
    )
    assert locate_spans("Deploy to staging with the token", S, transcript) == ()
    assert locate_spans("", S, transcript) == ()


@FAST
@given(st.lists(st.text(alphabet="abc make test deploy\n", max_size=60), min_size=1, max_size=6), st.text(alphabet="abc make test deploy ", max_size=40))
def test_every_quote_is_a_piece_of_its_line(texts: list[str], wanted: str) -> None:
    transcript = items(*((ItemKind.USER, t) for t in texts))
    for span in locate_spans(wanted, S, transcript, limit=5):
        assert span.quote and any(span.quote in line for line in transcript[span.item].text.split("\n"))
        assert len(span.quote.split()) <= QUOTE_WORDS


def test_each_item_gets_the_file_line_of_the_record_it_came_from() -> None:
    records = [
        {"type": "session_meta", "payload": {"id": "t"}},
        {"type": "response_item", "payload": {"type": "message", "content": [{"text": "Run the tests"}]}},
        {"type": "response_item", "payload": {"type": "function_call", "arguments": json.dumps({"command": "make test"})}},
        {"type": "response_item", "payload": {"type": "function_call_output", "output": json.dumps({"output": "12 passed\nok"})}},
    ]
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id="t", path="/p"),
        items=(
            TranscriptItem(kind=ItemKind.USER, text="Run the tests"),
            TranscriptItem(kind=ItemKind.TOOL_CALL, text=json.dumps({"command": "make test"})),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, text="12 passed\nok"),
            TranscriptItem(kind=ItemKind.ASSISTANT, text="nothing in the file says this"),
        ),
    )
    placed = with_lines(transcript, records, [1, 3, 4, 6])  # blank lines in the file shift the numbers
    assert [i.line for i in placed.items] == [3, 4, 6, None]


def test_the_lines_json_text_finds_the_same_record_whatever_escapes_its_writer_used() -> None:
    """Found from each record's JSON text as read, as from its objects: escaped characters, JSON in strings, keys."""
    texts = ["café au lait", 'say "hi"\tnow', "src/app.py: 3 errors", "déjà vu in a/b", "key_name_here"]
    records = [
        {"message": texts[0]},
        {"message": texts[1]},
        {"output": json.dumps({"output": texts[2]})},
        {"message": "x", "inner": json.dumps({"deep": texts[3]})},
        {"key_name_here": "not a value"},  # a probe in a key only is not held
        {"message": texts[4]},
    ]
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id="t", path="/p"),
        items=tuple(TranscriptItem(kind=ItemKind.USER, text=t) for t in texts),
    )
    numbers = list(range(1, len(records) + 1))
    expected = [i.line for i in with_lines(transcript, records, numbers).items]
    assert expected == [1, 2, 3, 4, 6]  # the objects alone decide (the reference)
    for writer in (
        lambda r: json.dumps(r),
        lambda r: json.dumps(r, ensure_ascii=False),
        lambda r: json.dumps(r).replace("/", "\\/"),
        lambda r: json.dumps(r, ensure_ascii=False, separators=(",", ":")),
    ):
        lines = [writer(r) for r in records]
        assert [json.loads(line) for line in lines] == records
        assert [i.line for i in with_lines(transcript, records, numbers, lines).items] == expected


_PIECES = st.sampled_from(["make test", "é", '"', "\\", "/", "\n", "\t", "\x00", "ab", " ", "{", "[1]", ":", "\\u00e9", "\u2028", "x"])
_TEXTS = st.lists(_PIECES, max_size=8).map("".join)
_JSON = st.recursive(
    _TEXTS | st.integers(0, 99),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXTS, inner, max_size=3) | inner.map(json.dumps),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.dictionaries(_TEXTS, _JSON, min_size=1, max_size=3), min_size=1, max_size=5),
    st.lists(_TEXTS, min_size=1, max_size=5),
    st.sampled_from(["ascii", "utf-8", "slashes", "compact"]),
)
def test_the_json_text_never_changes_which_line_an_item_gets(records: list[dict], texts: list[str], writer: str) -> None:
    """Random records (escapes, JSON in strings, keys holding the text) written in each style: the same lines."""
    lines = {
        "ascii": [json.dumps(r) for r in records],
        "utf-8": [json.dumps(r, ensure_ascii=False) for r in records],
        "slashes": [json.dumps(r).replace("/", "\\/") for r in records],
        "compact": [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records],
    }[writer]
    leaves = [s for r in records for s in _strings(r)]
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id="t", path="/p"),
        items=tuple(TranscriptItem(kind=ItemKind.USER, text=(leaves[n % len(leaves)] if leaves and n % 2 else t)) for n, t in enumerate(texts)),
    )
    numbers = list(range(1, len(records) + 1))
    assert with_lines(transcript, records, numbers, lines) == with_lines(transcript, records, numbers)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _call(command: str, call_id: str) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.TOOL_CALL, tool="exec_command", call_id=call_id, text=json.dumps({"cmd": command}))


def _result(text: str, call_id: str) -> TranscriptItem:
    return TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="exec_command", call_id=call_id, text=text)


def _placed(*transcript: TranscriptItem) -> tuple[TranscriptItem, ...]:
    return tuple(item.model_copy(update={"line": 320 + n}) for n, item in enumerate(transcript))


def test_a_command_fact_quotes_the_command_and_its_result_never_another_commands_output() -> None:
    transcript = _placed(
        TranscriptItem(kind=ItemKind.USER, text="Make the release bundle."),
        _call("cat package.json", "c1"),
        _result('{\n  "scripts": {\n    "build": "npm run build:types && npm run build:bundle",\n    "test": "vitest"\n  }\n}', "c1"),
        _call("npm run build", "c2"),
        _result("> acme@1.0.0 build\n> npm run build:types && npm run build:bundle\nbundle written", "c2"),
    )
    spans = locate_spans("`npm run build` passed", S, transcript)
    assert spans and {s.item for s in spans} <= {3, 4}, spans  # the command (line 323) and its own output, not package.json
    assert 2 not in {s.item for s in spans}


def test_a_word_repeated_is_not_two_words_of_evidence() -> None:
    transcript = _placed(
        _call("ls -la", "c1"),
        _result("total 8\ndrwxr-xr-x  5 dev dev 4096 May  4 09:00 .\n-rw-r--r--  1 dev dev  312 May  4 09:00 package.json", "c1"),
        _call("pnpm dev", "c2"),
        _result("ready on http://localhost:3000", "c2"),
    )
    spans = locate_spans("`pnpm dev` passed", S, transcript)
    assert [s.quote for s in spans] == ["pnpm dev"], spans


def test_a_call_gets_its_own_line_not_an_earlier_output_that_mentions_the_same_command() -> None:
    """`cat package.json`'s output holds "npm run build" and the folder: the `npm run build` call is still its own line."""
    package = '{"scripts": {"build": "npm run build"}}'
    cat_args = json.dumps({"cmd": "cat package.json", "workdir": "/w/app"})
    build_args = json.dumps({"cmd": "npm run build", "workdir": "/w/app"})
    records = [
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": cat_args}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": package}},
        {"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "c1", "cwd": "/w/app",
                                          "command": ["/bin/zsh", "-lc", "cat package.json"], "aggregated_output": package}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c2", "arguments": build_args}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c2", "output": "built"}},
    ]
    transcript = Transcript(
        meta=SessionMeta(source="codex", native_id="t", path="/p"),
        items=(
            TranscriptItem(kind=ItemKind.TOOL_CALL, tool="exec_command", call_id="c1", text=cat_args),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="exec_command", call_id="c1", text=package),
            TranscriptItem(kind=ItemKind.TOOL_CALL, tool="exec_command", call_id="c2", text=build_args),
            TranscriptItem(kind=ItemKind.TOOL_OUTPUT, tool="exec_command", call_id="c2", text="built"),
        ),
    )
    placed = with_lines(transcript, records, [320, 322, 324, 327, 329])
    assert [i.line for i in placed.items] == [320, 322, 327, 329]
