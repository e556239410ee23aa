"""The projection tables, for SQLite and PostgreSQL.

Times are stored as ISO-8601 text and lists as JSON text on both backends, so
the tables compare equal across an incremental build and a rebuild.
"""

from __future__ import annotations

TABLES: dict[str, str] = {
    "sessions": """
        id TEXT PRIMARY KEY, source TEXT, native_id TEXT, path TEXT, cwd TEXT, scope TEXT,
        git_branch TEXT, git_remote TEXT, agent_version TEXT, origin TEXT, interactive INTEGER,
        started_at TEXT, updated_at TEXT, first_user_message TEXT, content_hash TEXT,
        line_count INTEGER, item_count INTEGER, user_message_count INTEGER, redactions INTEGER,
        mode TEXT, mode_reason TEXT, eligible INTEGER, eligibility_reasons TEXT,
        extraction_status TEXT, claim_worker TEXT, claim_until TEXT, extracted_hash TEXT,
        rollout_summary TEXT, rollout_slug TEXT, raw_memory TEXT, extraction_model TEXT,
        extracted_at TEXT, attempts INTEGER, retry_after TEXT, last_error TEXT,
        pruned INTEGER, deleted INTEGER, recorded_at TEXT, changed_at TEXT
    """,
    "items": """
        id TEXT PRIMARY KEY, kind TEXT, scope TEXT, task_group TEXT, title TEXT, text TEXT,
        keywords TEXT, evidence TEXT, trust TEXT, status TEXT, valid_from TEXT, valid_to TEXT,
        created_at TEXT, updated_at TEXT, consolidation_id TEXT, revision INTEGER, pinned INTEGER,
        context_rank INTEGER, use_count INTEGER, context_tokens INTEGER, spans TEXT, skill TEXT,
        edited_by_user INTEGER, summary_tokens INTEGER
    """,
    "item_evidence": "item_id TEXT, session_id TEXT, PRIMARY KEY (item_id, session_id)",
    # How many items context may list per scope (active, not rejected): "N more items" without a COUNT of them all.
    "context_counts": "scope TEXT PRIMARY KEY, n INTEGER",
    "session_usage": "session_id TEXT PRIMARY KEY, use_count INTEGER, last_used TEXT",
    "item_usage": "item_id TEXT PRIMARY KEY, use_count INTEGER, last_used TEXT",
    # served is not cited: what reads handed an item out, apart from what agents said they used
    "item_serving": "item_id TEXT PRIMARY KEY, served_count INTEGER, last_served TEXT",
    "injections": "id TEXT PRIMARY KEY, session TEXT, project TEXT, surface TEXT, served_at TEXT, tokens INTEGER, items TEXT, excerpts TEXT",
    "citations": "id TEXT PRIMARY KEY, citing_session TEXT, source TEXT, cited_at TEXT, items TEXT",
    # Which citations name an item (explain reads an item's citations from here, not from the log).
    "item_citations": "item_id TEXT, citation_id TEXT, recorded_at TEXT, PRIMARY KEY (item_id, citation_id)",
    # Which items a run edited (audit reads those items' events, not the whole log).
    "run_edits": "consolidation_id TEXT, item_id TEXT, PRIMARY KEY (consolidation_id, item_id)",
    "consolidations": """
        id TEXT PRIMARY KEY, status TEXT, started_at TEXT, ended_at TEXT, worker TEXT, model TEXT,
        selection TEXT, diff TEXT, added INTEGER, revised INTEGER, retired INTEGER,
        invalidated INTEGER, overrides TEXT, error TEXT, user_profile TEXT, prompt_hash TEXT,
        input_tokens INTEGER, output_tokens INTEGER
    """,
    "tombstones": """
        id TEXT PRIMARY KEY, digest TEXT, width INTEGER, scope TEXT, reason TEXT, placed_at TEXT,
        lifted INTEGER, suppressions INTEGER
    """,
    # The search rows, keyed by an integer (the SQLite full-text index points at ``id``; newest highest).
    # ``vector``: the embedding of title and text (projections/vectors.py; NULL without a model).
    "search_rows": "id INTEGER PRIMARY KEY, item_id TEXT UNIQUE, scope TEXT, kind TEXT, title TEXT, text TEXT, keywords TEXT, vector TEXT",
    # History excerpts (domain/excerpts.py, projections/excerpt_rows.py): a session's turns, searchable;
    # ``parts`` the items they hold (a scrub changes those), ``vector`` the embedding of ``text``.
    "excerpts": """
        id INTEGER PRIMARY KEY, session_id TEXT, n INTEGER, scope TEXT, first_line INTEGER, last_line INTEGER,
        text TEXT, parts TEXT, vector TEXT
    """,
    # One row per session with excerpts: all their text, so history ranks whole chats by words too.
    "history_sessions": "id INTEGER PRIMARY KEY, session_id TEXT UNIQUE, scope TEXT, text TEXT",
    "notes": """
        id TEXT PRIMARY KEY, text TEXT, intent TEXT, scope TEXT, source TEXT, written_at TEXT,
        applied_by TEXT, withdrawn INTEGER
    """,
}

# Secondary indexes are created after a bulk load (rebuild), not before.
INDEXES: tuple[tuple[str, str, str], ...] = (
    ("sessions_scope", "sessions", "scope"),
    ("sessions_status", "sessions", "extraction_status"),
    ("items_scope_status", "items", "scope, status"),
    ("item_evidence_session", "item_evidence", "session_id"),
    # context reads items in rank order from here and stops at its budget (no sort of every item)
    ("items_context", "items", "scope, status, pinned DESC, context_rank, use_count DESC, updated_at DESC, id"),
    ("injections_session", "injections", "session, served_at"),
    ("citations_session", "citations", "citing_session"),
    ("excerpts_session", "excerpts", "session_id, n"),
    ("excerpts_scope", "excerpts", "scope"),
)

PREFIX = "mnemolog_view_"
SCHEMA_TABLE = PREFIX + "schema"  # one row: the version of the tables above that the views were built with


def table(name: str) -> str:
    """The real table name of a view table."""
    return PREFIX + name


def create_statements(dialect: str, *, with_indexes: bool = True) -> list[str]:
    """DDL for every view table (and the search index) in ``dialect`` ("sqlite" | "postgres").

    Without indexes (a bulk load) SQLite's search index is also left without the
    triggers that keep it in step: ``search_fill_statements`` fills it once after the load.
    """
    statements = [f"CREATE TABLE IF NOT EXISTS {table(n)} ({_typed(dialect, n, cols)})" for n, cols in TABLES.items()]
    statements.append(f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} (version TEXT NOT NULL)")
    if dialect == "sqlite":
        # An external-content FTS5 index over search_rows (rowid = search_rows.id), kept in step by
        # triggers: a row is replaced or removed by its indexed item_id, never by scanning the index.
        statements.append(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table('search')} USING fts5({_SEARCHED}, "
            f"content='{table('search_rows')}', content_rowid='id', tokenize='porter unicode61')"
        )
        for index, content in (("excerpt_search", "excerpts"), ("session_search", "history_sessions")):
            statements.append(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {table(index)} USING fts5(text, "
                f"content='{table(content)}', content_rowid='id', tokenize='porter unicode61')"
            )
        if with_indexes:
            statements += _search_triggers()
        # How many search rows hold each word (projections/search_words.py): the words bm25 gives no weight.
        statements.append(f"CREATE TABLE IF NOT EXISTS {table('search_words')} (word TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
    else:
        statements.append(
            f"ALTER TABLE {table('search_rows')} ADD COLUMN IF NOT EXISTS "
            "document tsvector GENERATED ALWAYS AS (to_tsvector('english', "
            "coalesce(title,'') || ' ' || coalesce(text,'') || ' ' || coalesce(keywords,''))) STORED"
        )
        for content in ("excerpts", "history_sessions"):
            statements.append(
                f"ALTER TABLE {table(content)} ADD COLUMN IF NOT EXISTS "
                "document tsvector GENERATED ALWAYS AS (to_tsvector('english', coalesce(text,''))) STORED"
            )
    if with_indexes:
        statements.extend(index_statements(dialect))
    return statements


# Integer keys wider than 32 bits (an excerpt's id is a 63-bit hash): PostgreSQL's INTEGER is 32 bits,
# SQLite's is 64 (and its INTEGER PRIMARY KEY the rowid the full-text index points at).
_WIDE_KEYS = frozenset({"excerpts", "history_sessions"})


def _typed(dialect: str, name: str, columns: str) -> str:
    if dialect == "postgres" and name in _WIDE_KEYS:
        return columns.replace("id INTEGER PRIMARY KEY", "id BIGINT PRIMARY KEY", 1)
    return columns


_SEARCHED = "title, text, keywords"  # the columns of search_rows the full-text index holds


def _search_triggers() -> list[str]:
    return [
        *_index_triggers("search", "search_rows", _SEARCHED),
        *_index_triggers("excerpt_search", "excerpts", "text"),
        *_index_triggers("session_search", "history_sessions", "text"),
    ]


def _index_triggers(index: str, content: str, searched: str) -> list[str]:
    rows, search = table(content), table(index)
    new = ", ".join(f"new.{c}" for c in searched.split(", "))
    old = ", ".join(f"old.{c}" for c in searched.split(", "))
    return [
        f"CREATE TRIGGER IF NOT EXISTS {PREFIX}{index}_added AFTER INSERT ON {rows} BEGIN "
        f"INSERT INTO {search} (rowid, {searched}) VALUES (new.id, {new}); END",
        f"CREATE TRIGGER IF NOT EXISTS {PREFIX}{index}_removed AFTER DELETE ON {rows} BEGIN "
        f"INSERT INTO {search} ({search}, rowid, {searched}) VALUES ('delete', old.id, {old}); END",
    ]


def search_fill_statements(dialect: str) -> list[str]:
    """After a bulk load: index every search row in one pass, then keep the index in step (SQLite; PostgreSQL computes it per row)."""
    if dialect != "sqlite":
        return []
    fills = [f"INSERT INTO {t} ({t}) VALUES ('rebuild')" for t in (table("search"), table("excerpt_search"), table("session_search"))]
    return [*fills, *_search_triggers()]


def index_statements(dialect: str) -> list[str]:
    """Secondary indexes, including the GIN index for PostgreSQL full-text search."""
    statements = [
        f"CREATE INDEX IF NOT EXISTS {PREFIX}{name} ON {table(tbl)} ({cols})" for name, tbl, cols in INDEXES
    ]
    if dialect == "postgres":
        statements.append(
            # fastupdate off: no pending list of unindexed rows that every search would scan in full
            f"CREATE INDEX IF NOT EXISTS {PREFIX}search_gin ON {table('search_rows')} USING GIN (document) WITH (fastupdate = off)"
        )
        for name, content in (("excerpt_gin", "excerpts"), ("session_gin", "history_sessions")):
            statements.append(
                f"CREATE INDEX IF NOT EXISTS {PREFIX}{name} ON {table(content)} USING GIN (document) WITH (fastupdate = off)"
            )
    return statements


def drop_statements() -> list[str]:
    """Drop every view table (the search indexes with them; their triggers go with search_rows)."""
    names = [*TABLES, "search", "excerpt_search", "session_search", "search_words"]
    return [f"DROP TABLE IF EXISTS {table(n)}" for n in names]


def copied_tables() -> list[str]:
    """Every view table a bulk load fills (search_rows has the same columns on both backends)."""
    return list(TABLES)


def dump_order() -> dict[str, str]:
    """Each comparable table with its ORDER BY, for equality checks between builds."""
    order = {n: "1" for n in TABLES}
    order["item_evidence"] = "item_id, session_id"
    order["search_rows"] = "item_id"
    order["excerpts"] = "session_id, n"
    order["history_sessions"] = "session_id"
    order["item_citations"] = "item_id, citation_id"
    order["run_edits"] = "consolidation_id, item_id"
    return order


# How the context line and the memory_summary.md line are written (domain.context_lines.context_line,
# markdown_folder.summary_line): items store both lines' token counts, so views built under another
# format are rebuilt. Raise it with any change to those lines; tests/unit/test_line_format.py fails
# when their code changes and this did not (a fingerprint of their source, recorded per format).
LINE_FORMAT = 2


def schema_version() -> str:
    """A fingerprint of the view tables' definition: views built under another one are rebuilt from the log."""
    import hashlib

    text = repr((sorted(TABLES.items()), INDEXES, create_statements("sqlite"), create_statements("postgres"), LINE_FORMAT))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
