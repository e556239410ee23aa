"""Citing a skill: an entry naming skills/<name>/SKILL.md (lines or not, however prefixed) is a use of that skill."""

from __future__ import annotations

from mnemolog.adapters.store import Store
from mnemolog.domain.citation_parsing import skill_file
from mnemolog.domain.services.cite import record_citation
from mnemolog.domain.services.read import context
from mnemolog.projections.schema import table
from support.memory import item, save

API = "git:example.com/acme/api"


def _block(entries: str) -> str:
    return f"<oai-mem-citation>\n<citation_entries>\n{entries}\n</citation_entries>\n<rollout_ids>\n</rollout_ids>\n</oai-mem-citation>"


def _uses(store: Store) -> dict[str, int]:
    rows = store.reads().query(f"SELECT item_id AS k, use_count FROM {table('item_usage')}")
    return {r["k"]: int(r["use_count"]) for r in rows}


def test_skill_file_paths() -> None:
    assert skill_file("skills/deploy-staging/SKILL.md") == "skills/deploy-staging/SKILL.md"
    assert skill_file("/home/u/.codex/memories/skills/deploy-staging/SKILL.md") == "skills/deploy-staging/SKILL.md"
    assert skill_file("skills/Deploy/SKILL.md") is None  # not a skill folder name
    assert skill_file("MEMORY.md") is None
    assert skill_file("skills/a/b/SKILL.md") is None  # a file inside a skill's folder is not the skill


def test_a_cited_skill_file_counts_as_a_use_of_the_skill(memory_store: Store) -> None:
    store = memory_store
    skill, other = save(store, item(API, "Deploy to staging: the steps", kind="skill"), item(API, "Lint with ruff."))
    files = {
        "skills/deploy-staging/SKILL.md": f"---\nname: deploy-staging\ndescription: x\n---\n\n1. `make deploy`\n\nMemory item: [item:{skill}]\n",
        "MEMORY.md": f"- Lint with ruff. [item:{other}]\n",
    }
    whole = record_citation(store, _block("skills/deploy-staging/SKILL.md|note=[followed the steps]"), "mcp", read_file=files.get)
    lines = record_citation(store, _block("/home/u/.codex/memories/skills/deploy-staging/SKILL.md:6-6|note=[deploy]"), "mcp", read_file=files.get)
    assert whole.item_ids == [skill] and lines.item_ids == [skill]
    assert _uses(store) == {skill: 2}
    missing = record_citation(store, _block("skills/gone/SKILL.md|note=[x]"), "mcp", read_file=files.get)
    assert missing.item_ids == []


def test_citations_raise_the_skill_in_context(memory_store: Store) -> None:
    store = memory_store
    plain, skill = save(store, item(API, "Lint with ruff."), item(API, "Deploy to staging: the steps", kind="skill"))
    files = {"skills/deploy-staging/SKILL.md": f"Memory item: [item:{skill}]\n", "MEMORY.md": f"- ruff [item:{plain}]\n"}

    def order() -> list[str]:
        shown = context(store.reads(), store.matcher(), _Words(), "", API, 2000)
        return [line for line in shown.text.splitlines() if "[item:" in line]

    record_citation(store, _block("MEMORY.md:1|note=[lint]"), "mcp", read_file=files.get)
    assert f"[item:{plain}]" in order()[0]  # the used item first
    for _ in range(2):
        record_citation(store, _block("skills/deploy-staging/SKILL.md|note=[used]"), "mcp", read_file=files.get)
    first, second = order()
    assert f"[item:{skill}]" in first and "used 2x" in first
    assert f"[item:{plain}]" in second


class _Words:
    """A tokenizer that counts whitespace-separated words."""

    def count(self, text: str) -> int:
        return len(text.split())

    def truncate(self, text: str, tokens: int) -> str:
        return " ".join(text.split()[: max(tokens, 0)])
