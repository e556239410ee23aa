"""`context` reads token counts the views stored when they projected each item: no tokenizer at read time."""

from __future__ import annotations

import os
import subprocess
import sys
from uuid import UUID

from mnemolog.adapters.store import Store
from mnemolog.adapters.tokens import count_tokens
from mnemolog.domain.context_lines import context_line
from mnemolog.domain.memory_item import Trust
from support.memory import item, save
from support.reading import context_for
from support.stores import FixedClock, StoreFactory

A = "git:example.com/acme/api"

_READ_AGAIN = """
import sys
from pathlib import Path
from mnemolog.adapters.store import open_store
from mnemolog.adapters.settings import Settings
from mnemolog.adapters.agent_context import context_for
store = open_store(Settings(home=Path(sys.argv[1]), database_url=sys.argv[2] or None))
context = context_for(store, sys.argv[3], 1500)
print(len(context.item_ids), context.tokens, "bpe_openai" in sys.modules)
"""


def _filled(store: Store) -> list[str]:
    ids = save(store, *[item(A if n % 2 else "global", f"Advice {n}: run the checks {n} times.", title=f"T{n}") for n in range(300)])
    chosen = store.app.repository.get(UUID(ids[7]))
    chosen.review(Trust.ACCEPTED, "dev")
    store.app.save_all(chosen)
    store.catch_up()
    return ids


def test_item_rows_carry_the_tokens_of_their_context_line(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock())
    ids = _filled(store)
    rows = {str(r.item_id): r for r in store.reads().context_items(A, 0, 400)}
    assert len(rows) == 300
    for row in rows.values():
        assert row.context_tokens == count_tokens(context_line(row) + "\n")
    assert "accepted" in context_line(rows[ids[7]])  # recounted after the review changed the line


def test_a_second_context_read_loads_no_tokenizer_and_counts_exactly(store_factory: StoreFactory) -> None:
    store = store_factory(clock=FixedClock())
    _filled(store)
    first = context_for(store, A, 1500)
    assert count_tokens(first.text) == first.tokens <= 1500 and first.more
    url = store.settings.database_url.get_secret_value() if store.settings.database_url else ""
    env = {k: v for k, v in os.environ.items() if k != "MNEMOLOG_DATABASE_URL"}
    out = subprocess.run(
        [sys.executable, "-c", _READ_AGAIN, str(store.settings.home), url, A], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert out == [str(len(first.item_ids)), str(first.tokens), "False"]
