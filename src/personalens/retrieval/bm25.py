"""Lexical retrieval with bm25s: Lucene variant, k1=1.5, b=0.75, English stopwords (PQB's setup)."""

import bm25s
import numpy as np

from personalens.retrieval.ranking import Document, Ranking, Unheld, search_by_scores


class BM25Retriever(Unheld):
    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene"):
        self.name = "bm25"
        self.k1, self.b, self.method = k1, b, method

    def index(self, docs: list[Document]) -> "BM25Index":
        return BM25Index(docs, self)


class BM25Index:
    def __init__(self, docs: list[Document], config: BM25Retriever):
        self.doc_ids = [d.id for d in docs]
        self._model = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        self._model.index(
            bm25s.tokenize([d.text for d in docs], stopwords="en", show_progress=False),
            show_progress=False,
        )

    def scores(self, queries: list[str]) -> np.ndarray:
        """Every document's score, so ties and zero scores rank deterministically by doc order."""
        if not queries:
            return np.zeros((0, len(self.doc_ids)))
        tokens = bm25s.tokenize(queries, stopwords="en", show_progress=False, return_ids=False)
        # A query of stopwords only has no tokens, which bm25s cannot score: it matches nothing.
        # Rows are filled in place (bm25s scores are float32), not stacked from a list of rows,
        # so the matrix is held once.
        out = np.zeros((len(queries), len(self.doc_ids)), dtype=np.float32)
        for row, query in zip(out, tokens, strict=True):
            if query:
                row[:] = self._model.get_scores(query)
        return out

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)
