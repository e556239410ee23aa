"""Parsing the memory citations agents print."""

from __future__ import annotations

from mnemolog.domain.citation_parsing import (
    CitationEntry,
    citation_from_event,
    parse_citation_blocks,
    parse_citation_entry,
    parse_item_ids,
)

ID_A = "019c6e27-e55b-73d1-87d8-4e01f1f75043"
ID_B = "019c6e28-0000-7000-8000-00000000000b"


def test_block_with_rollout_ids() -> None:
    text = (
        "Done, using what worked last time.\n"
        "<oai-mem-citation>\n<citation_entries>\n"
        "MEMORY.md:234-236|note=[how it was used]\n"
        "rollout_summaries/2026-02-11T15-35-19-jqmb.md:4|note=[the fix]\n"
        "</citation_entries>\n<rollout_ids>\n"
        f"  {ID_A}  \n{ID_A}\nnot-a-uuid\n{ID_B.upper()}\n"
        "</rollout_ids>\n</oai-mem-citation>"
    )
    [ref] = parse_citation_blocks(text)
    assert ref.rollout_ids == (ID_A, ID_B)  # trimmed, de-duplicated, UUIDs only
    assert ref.entries == (
        "MEMORY.md:234-236|note=[how it was used]",
        "rollout_summaries/2026-02-11T15-35-19-jqmb.md:4|note=[the fix]",
    )


def test_legacy_thread_ids_and_several_blocks() -> None:
    text = (
        f"<oai-mem-citation><thread_ids>{ID_B}</thread_ids></oai-mem-citation> and "
        f"<oai-mem-citation><rollout_ids>{ID_A}</rollout_ids></oai-mem-citation>"
    )
    refs = parse_citation_blocks(text)
    assert [ref.rollout_ids for ref in refs] == [(ID_B,), (ID_A,)]


def test_unclosed_or_empty_blocks_are_ignored() -> None:
    assert parse_citation_blocks("<oai-mem-citation><rollout_ids>x</rollout_ids>") == []
    assert parse_citation_blocks("<oai-mem-citation></oai-mem-citation>") == []
    assert parse_citation_blocks("no citation here") == []


def test_entry_splits_at_the_last_note_and_last_colon() -> None:
    entry = parse_citation_entry("C:/mem/MEMORY.md:10-12|note=[used: the fix [see 3]]")
    assert entry == CitationEntry(
        path="C:/mem/MEMORY.md", line_start=10, line_end=12, note="used: the fix [see 3]"
    )
    assert parse_citation_entry("MEMORY.md:7") == CitationEntry("MEMORY.md", 7, 7, None)
    assert parse_citation_entry("MEMORY.md") == CitationEntry("MEMORY.md", None, None, None)
    assert parse_citation_entry("   ") is None


def test_structured_event_citation_uses_camel_case() -> None:
    ref = citation_from_event(
        {
            "entries": [{"path": "MEMORY.md", "lineStart": 3, "lineEnd": 5, "note": "tip"}],
            "rolloutIds": [ID_A, "bogus"],
        }
    )
    assert ref is not None
    assert ref.rollout_ids == (ID_A,)
    assert ref.entries == ("MEMORY.md:3-5|note=[tip]",)
    assert citation_from_event({"entries": [], "rolloutIds": []}) is None


def test_item_ids_are_collected_in_order_without_duplicates() -> None:
    text = (
        f"Per [item:{ID_B}] and [item:{ID_A.upper()}], then again [item:{ID_B}]; "
        "ignore [item:123] and item:" + ID_A
    )
    assert parse_item_ids(text) == [ID_B, ID_A]
