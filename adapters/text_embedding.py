"""The embedding model as the views and search use it: loaded once per process, on first need.

The views embed item and excerpt texts as they are projected
(``embed_texts``: stored vectors, ``projections/vectors.py``); search embeds
the query (``embed_query``). Both come from the one model the settings name
(``embedding_model``; ``adapters/embeddings.py`` knows the models). When it
cannot be had (the package missing, ``none`` chosen) the vectors stay empty
and search ranks by words, saying why once (``reason``).
"""

from __future__ import annotations

import threading
from typing import Any

OFF = "none"
# How much a rank by meaning counts in search, against a rank by words, per model: measured on the decision
# corpus (docs/recall.md). A model not listed (a plugin) counts as much as the words.
FUSION_WEIGHTS = {"wordllama-l2-supercat": 0.25, "all-minilm-l6-v2": 1.0}


class TextEmbedding:
    """One embedding model, loaded lazily: texts as stored vectors, a query as a vector."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._model: Any = None
        self._loaded = False
        self._reason = ""
        self._lock = threading.Lock()

    def model(self) -> Any:
        """The loaded model (None: none can be had; ``reason`` says why)."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                if self.name == OFF:
                    self._reason = "search ranks by words only: embedding_model is 'none'"
                else:
                    try:
                        from mnemolog.adapters.embeddings import load_embedder, unavailable_reason
                    except ImportError as error:
                        self._reason = f"search ranks by words only: no embedding models ({error})"
                    else:
                        self._model = load_embedder(None if self.name == "default" else self.name)
                        if self._model is None:
                            self._reason = f"search ranks by words only: {unavailable_reason(None if self.name == 'default' else self.name)}"
            return self._model

    @property
    def reason(self) -> str:
        """Why search ranks by words only ("" when the model is there)."""
        self.model()
        return self._reason

    @property
    def fusion_weight(self) -> float:
        """How much this model's ranks count in search (``FUSION_WEIGHTS``)."""
        model = self.model()
        return FUSION_WEIGHTS.get(getattr(model, "name", ""), 1.0)

    def embed_texts(self, texts: list[str]) -> list[str | None]:
        """Each text's vector, as the views store it (None each without a model)."""
        model = self.model()
        if model is None or not texts:
            return [None] * len(texts)
        from mnemolog.projections.vectors import encode

        return encode(model.embed(texts))

    def embed_query(self, text: str) -> Any:
        """The query's normalised vector (None without a model)."""
        model = self.model()
        return None if model is None else model.embed([text])[0]


_LOADED: dict[str, TextEmbedding] = {}


def text_embedding(name: str) -> TextEmbedding:
    """The process's one ``TextEmbedding`` of ``name`` (the MCP server and the views share it, warm)."""
    if name not in _LOADED:
        _LOADED[name] = TextEmbedding(name)
    return _LOADED[name]
