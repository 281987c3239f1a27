"""Late-interaction retrieval (ColBERT) with PyLate: one vector per token, scored by MaxSim.

PyLate is an optional extra (`personalens[colbert]`): it pins its own sentence-transformers
version, so it is imported only when a ColBERT retriever is asked for. PyLate loads the model
and encodes; search is brute-force MaxSim over the whole corpus, in torch here, which is exact
and fast enough for benchmark corpora. Token embeddings are not cached on disk (they are a few
hundred vectors per document).
"""

import importlib.util

import numpy as np

from personalens.errors import InputError
from personalens.retrieval.model_source import load_model_once, resolve_model_source
from personalens.retrieval.ranking import Document, Ranking, Unheld, search_by_scores

COLBERT = "lightonai/colbertv2.0"

# MaxSim materialises (queries, docs, query tokens, doc tokens) similarities; documents are
# scored in chunks small enough to keep that block near this many floats (1 GiB).
_MAXSIM_FLOATS = 2**28


def require_pylate(name: str) -> None:
    """InputError, before any model loads, if the colbert extra is not installed."""
    # find_spec, not import: importing PyLate is slow and should happen only when needed.
    if importlib.util.find_spec("pylate") is None:
        kind = name.partition(":")[0]
        raise InputError(f"retriever {kind!r} needs PyLate: pip install 'personalens[colbert]'")


class LateInteractionRetriever(Unheld):
    """`colbert` or `colbert:<model name or local path>` (any PyLate ColBERT model)."""

    def __init__(self, model: str = COLBERT, *, name: str | None = None, batch_size: int = 32):
        self.name = name or f"colbert:{model}"
        require_pylate(self.name)
        self.source, self.identity = resolve_model_source(model, self.name)
        self.batch_size = batch_size
        self._model = None

    def load(self):
        """The PyLate ColBERT model (loaded once); InputError if it cannot load."""
        if self._model is None:
            from pylate import models

            self._model = load_model_once(
                lambda: models.ColBERT(model_name_or_path=self.source, device="cpu"),
                self.name, "PyLate ColBERT")
        return self._model

    def encode(self, texts: list[str], *, is_query: bool) -> list[np.ndarray]:
        """One (tokens, dim) array per text; PyLate pads queries with [MASK] expansion tokens."""
        return list(self.load().encode(texts, batch_size=self.batch_size, is_query=is_query,
                                       show_progress_bar=False))

    def index(self, docs: list[Document]) -> "LateInteractionIndex":
        return LateInteractionIndex(self, docs)


class LateInteractionIndex:
    def __init__(self, retriever: LateInteractionRetriever, docs: list[Document]):
        self.retriever = retriever
        self.doc_ids = [d.id for d in docs]
        self.doc_tokens = retriever.encode([d.text for d in docs], is_query=False)

    def scores(self, queries: list[str]) -> np.ndarray:
        if not queries:
            return np.zeros((0, len(self.doc_ids)), np.float32)
        return maxsim(self.retriever.encode(queries, is_query=True), self.doc_tokens)

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)


def maxsim(queries: list[np.ndarray], docs: list[np.ndarray]) -> np.ndarray:
    """(n_queries, n_docs) exact ColBERT scores: each query token's best document token, summed.

    Padding is masked out rather than left as zero vectors (as PyLate's `rank.rerank` does):
    a zero pad has similarity 0, which would beat a short document's negative similarities.
    """
    import torch

    pad = torch.nn.utils.rnn.pad_sequence
    query_block = pad([torch.as_tensor(q, dtype=torch.float32) for q in queries], batch_first=True)
    query_mask = pad([torch.ones(len(q), dtype=torch.bool) for q in queries], batch_first=True)
    longest = max((len(d) for d in docs), default=1)
    chunk = max(1, _MAXSIM_FLOATS // (query_block.shape[0] * query_block.shape[1] * longest))
    columns = [np.zeros((len(queries), 0), np.float32)]
    with torch.inference_mode():
        for start in range(0, len(docs), chunk):
            block = docs[start:start + chunk]
            doc_block = pad([torch.as_tensor(d, dtype=torch.float32) for d in block],
                            batch_first=True)
            doc_mask = pad([torch.ones(len(d), dtype=torch.bool) for d in block],
                           batch_first=True)
            similarity = torch.einsum("ash,bth->abst", query_block, doc_block)
            similarity = similarity.masked_fill(~doc_mask[None, :, None, :], float("-inf"))
            best = similarity.max(dim=-1).values  # (queries, docs, query tokens)
            best = torch.where(query_mask[:, None, :], best, torch.zeros(()))
            columns.append(best.sum(dim=-1).numpy())
    return np.hstack(columns)
