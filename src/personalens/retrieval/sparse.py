"""Learned sparse retrieval (SPLADE) with sentence-transformers' SparseEncoder.

Each text becomes a weighted bag of vocabulary terms; a document's score is the dot product of
its term weights with the query's. Both sides live in SciPy CSR matrices, so scoring a batch of
queries against the corpus is one sparse matrix product.
"""

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from personalens.retrieval.embedding_cache import EmbeddingCache
from personalens.retrieval.model_source import (
    bundled_minilm_path,
    load_model_once,
    resolve_model_source,
)
from personalens.retrieval.ranking import Document, Ranking, Unheld, search_by_scores

SPLADE = "naver/splade-cocondenser-ensembledistil"


def pack(indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    """One sparse vector as a float32 array the embedding cache can store: indices, then values.

    The int32 indices are stored bit for bit (a view, not a conversion), so nothing is rounded.
    """
    return np.concatenate([indices.astype(np.int32).view(np.float32),
                           values.astype(np.float32)])


def unpack(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    half = len(packed) // 2
    return packed[:half].view(np.int32), packed[half:]


def to_csr(packed: list[np.ndarray], width: int | None = None) -> sp.csr_matrix:
    """Rows of packed vectors as a CSR matrix; columns at or beyond `width` are dropped."""
    parts = [unpack(p) for p in packed]
    indices = np.concatenate([i for i, _ in parts]) if parts else np.zeros(0, np.int32)
    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0, np.float32)
    indptr = np.concatenate([[0], np.cumsum([len(i) for i, _ in parts])]).astype(np.int64)
    n_cols = int(indices.max()) + 1 if len(indices) else 1
    matrix = sp.csr_matrix((values, indices, indptr), shape=(len(packed), max(n_cols, width or 0)))
    # A query term that no document has cannot score; dropping it keeps the shapes aligned.
    return matrix[:, :width] if width is not None else matrix


def rows_of(tensor) -> list[np.ndarray]:
    """Packed rows of a (n, vocab) torch sparse COO tensor, as SparseEncoder returns."""
    coo = tensor.coalesce().cpu()
    rows, cols = coo.indices().numpy()
    values = coo.values().numpy()
    bounds = np.searchsorted(rows, np.arange(coo.shape[0] + 1))  # coalesce sorts by row
    return [pack(cols[a:b], values[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


class SparseRetriever(Unheld):
    """`splade` or `splade:<model name or local path>`.

    `max_active_dims` keeps only the largest weights per text (SparseEncoder's own option);
    None keeps what the model outputs.
    """

    def __init__(self, model: str = SPLADE, *, name: str | None = None, batch_size: int = 32,
                 cache: EmbeddingCache | None = None, max_active_dims: int | None = None):
        self.name = name or f"splade:{model}"
        self.source, identity = resolve_model_source(model, self.name)
        cap = "" if max_active_dims is None else f"@top{max_active_dims}"
        self.identity = f"sparse:{identity}{cap}"
        self.batch_size = batch_size
        self.max_active_dims = max_active_dims
        self.cache = cache if cache is not None else EmbeddingCache.default()
        self._model = None
        self.encoded_texts = 0  # texts that missed the cache, for benchmarks and tests

    def load(self):
        """The SparseEncoder (loaded once); InputError if it cannot load."""
        if self._model is None:
            from sentence_transformers import SparseEncoder

            self._model = load_model_once(lambda: SparseEncoder(self.source, device="cpu"),
                                          self.name, "SparseEncoder")
        return self._model

    def encode(self, texts: list[str], *, is_query: bool) -> list[np.ndarray]:
        """Packed sparse vectors for `texts`; queries and documents may be encoded differently."""
        role = "query" if is_query else "document"
        vectors, encoded = self.cache.lookup_or_encode(
            f"{self.identity}#{role}", texts, lambda fresh: self._encode_fresh(fresh, is_query))
        self.encoded_texts += encoded
        return vectors

    def _encode_fresh(self, texts: list[str], is_query: bool) -> list[np.ndarray]:
        model = self.load()
        encode = model.encode_query if is_query else model.encode_document
        return rows_of(encode(texts, batch_size=self.batch_size, show_progress_bar=False,
                              max_active_dims=self.max_active_dims))

    def index(self, docs: list[Document]) -> "SparseIndex":
        return SparseIndex(self, docs)


class SparseIndex:
    def __init__(self, retriever: SparseRetriever, docs: list[Document]):
        self.retriever = retriever
        self.doc_ids = [d.id for d in docs]
        self.matrix = to_csr(retriever.encode([d.text for d in docs], is_query=False))

    def scores(self, queries: list[str]) -> np.ndarray:
        if not queries:
            return np.zeros((0, len(self.doc_ids)), np.float32)
        packed = self.retriever.encode(queries, is_query=True)
        product = to_csr(packed, width=self.matrix.shape[1]) @ self.matrix.T
        return product.toarray()

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)


def save_offline_splade(folder: Path, max_active_dims: int = 64) -> Path:
    """A SPLADE-shaped SparseEncoder built from the bundled MiniLM, saved for `splade:<folder>`.

    It runs the real SparseEncoder code path offline (tests, benchmarks, demos), but it was
    never trained for sparse retrieval. MiniLM has no masked-LM head, so the head's transform is
    set to the identity: a token's term weights are then its similarity to every vocabulary
    embedding, which is deterministic and loosely meaningful, unlike a random initialisation.
    """
    import torch
    from sentence_transformers import SparseEncoder
    from sentence_transformers.sparse_encoder.modules import SpladePooling, Transformer

    mlm = Transformer(str(bundled_minilm_path()), transformer_task="fill-mask")
    transform = mlm.auto_model.cls.predictions.transform.dense
    with torch.no_grad():
        transform.weight.copy_(torch.eye(transform.in_features))
        transform.bias.zero_()
    encoder = SparseEncoder(modules=[mlm, SpladePooling("max")], device="cpu",
                            max_active_dims=max_active_dims)
    encoder.save(str(folder))
    return folder
