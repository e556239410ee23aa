"""The tombstone matcher: normalised token windows, scrubbing, and the one scope rule (``reaches``)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mnemolog.domain.plan import GLOBAL_SCOPE
from mnemolog.domain.tombstone_matcher import (
    EVERY_PROJECT,
    FORGOTTEN_MARK,
    TombstoneMatcher,
    WindowHash,
    fingerprint,
    reaches,
    tokens,
)

from .builders import API, FAST, KEY, WEB, forgetting, item, matcher, rule

SECRET = "blue falcon 42"


# --- normalisation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "blue falcon 42",
        "Blue Falcon 42",
        "BLUE-FALCON-42",
        "  blue, falcon; (42)!",
        "blue\nfalcon\t42",
        "ＢＬＵＥ ｆａｌｃｏｎ ４２",  # fullwidth letters and digits (NFKC)
    ],
)
def test_a_value_is_fingerprinted_by_its_folded_words(spelling: str) -> None:
    assert fingerprint(KEY, spelling) == fingerprint(KEY, SECRET)
    assert fingerprint(KEY, spelling)[1] == 3


def test_the_fingerprint_is_keyed_and_word_exact() -> None:
    assert fingerprint(b"another key", SECRET) != fingerprint(KEY, SECRET)
    assert fingerprint(KEY, "blue falcons 42") != fingerprint(KEY, SECRET)
    # "_" separates words, so a value is found in identifiers and branch names (blue_falcon_42) too.
    assert fingerprint(KEY, "blue_falcon 42") == fingerprint(KEY, SECRET)


@pytest.mark.parametrize("value", ["", "   ", "!?-- ..."])
def test_a_value_without_words_cannot_be_forgotten(value: str) -> None:
    with pytest.raises(ValueError, match="no words"):
        fingerprint(KEY, value)


def test_tokens_are_case_folded_and_keep_their_spans_in_the_original_text() -> None:
    text = "Die STRAẞE, ok"
    assert [(t.text, text[t.start : t.end]) for t in tokens(text)] == [
        ("die", "Die"),
        ("strasse", "STRAẞE"),
        ("ok", "ok"),
    ]


def test_tokens_fold_nfkc_even_where_it_changes_lengths() -> None:
    # "ﬁ" expands to two letters, "e" + a combining accent composes to one: the spans still point at the source.
    text = "ﬁle cafe\u0301 ＯＫ"
    assert [(t.text, text[t.start : t.end]) for t in tokens(text)] == [
        ("file", "ﬁle"),
        ("café", "cafe\u0301"),
        ("ok", "ＯＫ"),
    ]


def test_a_decomposed_spelling_matches_a_composed_value() -> None:
    assert forgetting("café noir").contains("at the CAFE\u0301 NOIR", GLOBAL_SCOPE)
    assert forgetting("cafe\u0301 noir").contains("at the café noir", GLOBAL_SCOPE)


def test_a_fullwidth_value_is_found_beside_a_ligature() -> None:
    assert forgetting(SECRET).contains("ﬁx: ＢＬＵＥ falcon 42", GLOBAL_SCOPE)


# --- find and scrub --------------------------------------------------------------------


def test_find_reports_each_window_that_matches() -> None:
    forgotten = forgetting(SECRET)
    text = "Blue falcon 42 and then blue-falcon-42."
    spans = [text[m.start : m.end] for m in forgotten.find(text, GLOBAL_SCOPE)]
    assert spans == ["Blue falcon 42", "blue-falcon-42"]


def test_find_matches_whole_words_only() -> None:
    forgotten = forgetting(SECRET)
    assert not forgotten.contains("blue falcon 420", GLOBAL_SCOPE)
    assert not forgotten.contains("xblue falcon 42", GLOBAL_SCOPE)
    assert not forgotten.contains("blue falcon", GLOBAL_SCOPE)
    assert not forgotten.contains("", GLOBAL_SCOPE)


def test_find_reports_overlapping_windows() -> None:
    forgotten = forgetting("ab ab")
    text = "ab ab ab"
    assert [(m.start, m.end) for m in forgotten.find(text, GLOBAL_SCOPE)] == [(0, 5), (3, 8)]


def test_scrub_cuts_every_value_and_keeps_the_rest() -> None:
    forgotten = forgetting(SECRET)
    clean, ids = forgotten.scrub("Deploy with Blue-Falcon-42 on staging (BLUE FALCON 42).", GLOBAL_SCOPE)
    assert clean == f"Deploy with {FORGOTTEN_MARK} on staging ({FORGOTTEN_MARK})."
    assert ids == (rule(SECRET).tombstone_id,)


def test_scrub_makes_one_cut_of_overlapping_windows() -> None:
    forgotten = forgetting("ab ab")
    assert forgotten.scrub("x ab ab ab y", GLOBAL_SCOPE)[0] == f"x {FORGOTTEN_MARK} y"


def test_scrub_joins_overlapping_values_of_different_tombstones() -> None:
    both = matcher(rule("red fox"), rule("fox jumps high"))
    clean, ids = both.scrub("the red fox jumps high today", GLOBAL_SCOPE)
    assert clean == f"the {FORGOTTEN_MARK} today"
    assert ids == tuple(sorted({rule("red fox").tombstone_id, rule("fox jumps high").tombstone_id}, key=str))


def test_scrub_without_a_match_changes_nothing() -> None:
    assert forgetting(SECRET).scrub("nothing to see", GLOBAL_SCOPE) == ("nothing to see", ())
    assert matcher().scrub(SECRET, GLOBAL_SCOPE) == (SECRET, ())


def test_scrub_cuts_the_exact_span_when_nfkc_shifts_offsets() -> None:
    text = "ﬁx: blue-falcon-42 cafe\u0301"
    assert forgetting(SECRET).scrub(text, GLOBAL_SCOPE)[0] == f"ﬁx: {FORGOTTEN_MARK} cafe\u0301"


def test_the_mark_never_matches_so_a_scrubbed_text_is_clean() -> None:
    # A value holding the mark's word: the mark left behind must not match it again.
    forgotten = forgetting("forgotten password hunter2")
    clean, _ = forgotten.scrub("forgotten password hunter2 password hunter2", GLOBAL_SCOPE)
    assert clean == f"{FORGOTTEN_MARK} password hunter2"
    assert not forgotten.contains(clean, GLOBAL_SCOPE)
    assert not forgetting("forgotten").contains(f"I have {FORGOTTEN_MARK} it", GLOBAL_SCOPE)


# --- the one scope rule -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule_scope", "reader", "withheld"),
    [
        (GLOBAL_SCOPE, API, True),
        (GLOBAL_SCOPE, WEB, True),
        (GLOBAL_SCOPE, GLOBAL_SCOPE, True),  # a writer judging a global item
        (GLOBAL_SCOPE, EVERY_PROJECT, True),
        (API, API, True),  # a reader in that project (its items and the global ones it reads)
        (API, WEB, False),  # another project
        (API, GLOBAL_SCOPE, False),  # a writer judging a global item: it may be stored
        (API, EVERY_PROJECT, True),  # the shared folder, which API reads too
    ],
)
def test_reaches(rule_scope: str, reader: str | None, withheld: bool) -> None:
    assert reaches(rule_scope, reader) is withheld
    assert forgetting(SECRET, rule_scope).contains(f"use {SECRET}", reader) is withheld


def test_withholds_looks_at_every_field_of_an_item() -> None:
    forgotten = forgetting(SECRET)
    for carrier in (
        item("text", text=f"Deploy with {SECRET}"),
        item("title", title=SECRET.upper()),
        item("keywords", keywords=("blue", "falcon", "42")),
        item("task group", task_group="blue-falcon-42"),
    ):
        assert forgotten.withholds(carrier, API), carrier
    assert not forgotten.withholds(item("clean"), API)


def test_withholds_asks_reaches_with_the_readers_scope() -> None:
    global_carrier = item("global", scope=GLOBAL_SCOPE, text=SECRET)
    in_api = forgetting(SECRET, API)
    assert in_api.withholds(global_carrier, API)  # API's readers never see it
    assert in_api.withholds(global_carrier, EVERY_PROJECT)  # nor does the shared folder
    assert not in_api.withholds(global_carrier, WEB)  # another project still does
    assert not in_api.withholds(global_carrier, global_carrier.scope)  # so it may be stored


def test_a_task_group_or_keyword_that_is_the_readers_project_name_carries_nothing() -> None:
    """The scope key names the project and is never rewritten: its name as a task group (offline plans) is no carrier."""
    falcon = "git:example.com/acme/blue-falcon-42"
    forgotten = forgetting(SECRET)
    grouped = item("grouped", scope=falcon, task_group="blue-falcon-42")
    assert not forgotten.withholds(grouped, falcon)  # stored, and read in its project
    assert forgotten.withholds(grouped, EVERY_PROJECT)  # the shared folder has no project to name
    assert forgotten.withholds(item("in another", scope=API, task_group="blue-falcon-42"), API)
    assert forgotten.withholds(item("titled", scope=falcon, title="blue falcon 42", task_group="blue-falcon-42"), falcon)
    assert forgotten.withholds(item("spelled", scope=falcon, task_group="Blue Falcon 42"), falcon)  # not the name itself
    assert not forgotten.withholds(item("tagged", scope=falcon, keywords=("make", "blue-falcon-42")), falcon)  # a keyword alike
    assert forgotten.withholds(item("tagged apart", scope=falcon, keywords=("blue", "falcon", "42")), falcon)
    api_key = forgetting("api key")
    assert api_key.withholds(item("runs on", keywords=("api", "key")), API)  # the value runs on past the name "api"
    assert not api_key.withholds(item("alone", keywords=("api", "rotate")), API)


def test_a_matcher_without_tombstones_withholds_nothing() -> None:
    assert not TombstoneMatcher(KEY, []).withholds(item("any", text=SECRET), EVERY_PROJECT)


# --- properties ---------------------------------------------------------------------------

WORD = st.one_of(
    st.sampled_from(["forgotten", "deploy", "token", "42", "x"]),  # the mark's own word included
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8),
)
# Text around the value: ASCII, and the characters that make folding hard (ligatures, combining
# marks, fullwidth and compatibility forms, case folds that change length, Hangul jamo, odd spaces).
FILLER = st.text(
    alphabet="abcXYZ019 _-.,\n" "ﬁßẞİé\u0301\u0308ＡＢ４½①™´\u00a0\u3000\uac00\u1100\u1161\u03a9\u2126ǅµſ…\u200b",
    max_size=12,
)
SEPARATOR = st.text(alphabet=" \t\n-.,;:!?()[]/'\"", min_size=1, max_size=3)
SCOPES = st.sampled_from([GLOBAL_SCOPE, API, WEB])
READERS = st.sampled_from([GLOBAL_SCOPE, API, WEB, EVERY_PROJECT])


@st.composite
def spelled(draw: st.DrawFn, words: list[str]) -> str:
    """The words of a value as a writer might spell them: any casing, fullwidth forms, punctuation between."""
    out = []
    for index, word in enumerate(words):
        letters = []
        for char in word:
            form = draw(st.sampled_from(["lower", "upper", "fullwidth"]))
            letters.append(
                char.upper() if form == "upper" else chr(ord(char.upper()) + 0xFEE0) if form == "fullwidth" else char
            )
        if index:
            out.append(draw(SEPARATOR))
        out.append("".join(letters))
    return "".join(out)


@st.composite
def texts_with(draw: st.DrawFn, words: list[str]) -> str:
    """Any text with the value spelled into it anywhere, any number of times."""
    parts = [draw(FILLER)]
    for _ in range(draw(st.integers(1, 3))):
        parts += [draw(SEPARATOR), draw(spelled(words)), draw(SEPARATOR), draw(FILLER)]
    return "".join(parts)


@FAST
@given(data=st.data(), words=st.lists(WORD, min_size=1, max_size=3))
def test_any_spelling_of_a_value_has_its_fingerprint(data: st.DataObject, words: list[str]) -> None:
    assert fingerprint(KEY, data.draw(spelled(words))) == fingerprint(KEY, " ".join(words))


@FAST
@given(data=st.data(), values=st.lists(st.lists(WORD, min_size=1, max_size=3), min_size=1, max_size=3), reader=READERS)
def test_scrub_removes_every_occurrence(data: st.DataObject, values: list[list[str]], reader: str | None) -> None:
    rules = [rule(" ".join(words), data.draw(SCOPES)) for words in values]
    forgotten = matcher(*rules)
    inserted = data.draw(st.sampled_from(rules))
    text = data.draw(texts_with(values[rules.index(inserted)]))
    clean, ids = forgotten.scrub(text, reader)
    assert not forgotten.contains(clean, reader)
    assert set(ids) <= {r.tombstone_id for r in rules if reaches(r.scope, reader)}
    if reaches(inserted.scope, reader):
        assert {r.tombstone_id for r in rules if r.digest == inserted.digest} & set(ids)
    assert forgotten.scrub(clean, reader) == (clean, ())  # scrubbing is done in one pass


@FAST
@given(data=st.data(), words=st.lists(WORD, min_size=1, max_size=3), scope=SCOPES, reader=READERS)
def test_a_spelled_value_is_found_exactly_when_its_tombstone_reaches_the_reader(
    data: st.DataObject, words: list[str], scope: str, reader: str | None
) -> None:
    text = data.draw(texts_with(words))
    assert forgetting(" ".join(words), scope).contains(text, reader) is reaches(scope, reader)


@FAST
@given(data=st.data(), values=st.lists(st.lists(WORD, min_size=1, max_size=4), min_size=1, max_size=4))
def test_a_matcher_asked_again_answers_as_a_new_one_for_each_reader(data: st.DataObject, values: list[list[str]]) -> None:
    """A matcher remembers what it found in a text: asked again, for any reader in any order, it answers the same."""
    rules = [rule(" ".join(words), data.draw(SCOPES)) for words in values]
    kept = matcher(*rules)
    texts = [data.draw(texts_with(words)) for words in values] + [data.draw(FILLER)]
    for _ in range(2):
        for text in texts:
            for reader in (API, WEB, GLOBAL_SCOPE, EVERY_PROJECT):
                assert kept.find(text, reader) == matcher(*rules).find(text, reader), (text, reader)


@pytest.mark.parametrize("key", [b"", b"k", b"rule-test-key" * 4, b"x" * 64, b"y" * 65, b"z" * 200])
def test_a_window_fed_word_by_word_has_the_keyed_hash_of_the_whole_window(key: bytes) -> None:
    hashed = WindowHash(key)
    state = hashed.start(b"blue")
    assert hashed.digest(state) == hmac.digest(key, b"blue", hashlib.sha256)
    state.update(b" falcon")
    state.update(b" 42")
    assert hashed.digest(state) == hmac.digest(key, b"blue falcon 42", hashlib.sha256)
