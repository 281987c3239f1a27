"""What a retriever returns, and the protocol every retriever implements."""

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

# Queries are ranked this many at a time, so a score matrix never holds more than
# (QUERY_BATCH, n_docs) floats however many queries a benchmark asks at once.
QUERY_BATCH = 256


@dataclass(frozen=True)
class Document:
    id: str
    text: str


@dataclass(frozen=True)
class Ranking:
    """Top-k ids and scores per query, best first.

    `errors` is None when every query was ranked. Otherwise it holds, per query, None or the
    message of the model call that failed for it: such a query's ids are only a fallback order
    (its scores are NaN), and callers must record it as failed rather than score it.
    """

    ids: list[list[str]]
    scores: np.ndarray  # (n_queries, k)
    errors: list[str | None] | None = None


class Index(Protocol):
    def search(self, queries: list[str], k: int) -> Ranking: ...


@runtime_checkable
class ScoringIndex(Protocol):
    """An index that scores every document, which is what fusion (hybrid) needs."""

    doc_ids: list[str]

    def scores(self, queries: list[str]) -> np.ndarray:
        """(n_queries, n_docs) scores, higher is better, columns in `doc_ids` order."""
        ...

    def search(self, queries: list[str], k: int) -> Ranking: ...


class Retriever(Protocol):
    """Blocking: inside a run, call `index`, `search` and `close` through
    `runs.blocking.run_blocking`, off the event loop."""

    name: str

    def index(self, docs: list[Document]) -> Index: ...

    def close(self) -> None:
        """Release what the retriever holds (a reranker's model); safe to call twice."""
        ...


class Unheld:
    """For retrievers that hold nothing that needs releasing."""

    def close(self) -> None:
        return None


def top_k(scores: np.ndarray, doc_ids: list[str], k: int) -> Ranking:
    """Rank a dense (n_queries, n_docs) score matrix; ties keep document order (stable)."""
    k = min(k, scores.shape[1])
    order = np.empty((len(scores), k), dtype=np.intp)
    for i, row in enumerate(scores):
        order[i] = _top_row(row, k)
    return Ranking(
        ids=[[doc_ids[j] for j in row] for row in order],
        scores=np.take_along_axis(scores, order, axis=1),
    )


def _top_row(row: np.ndarray, k: int) -> np.ndarray:
    """`np.argsort(-row, kind="stable")[:k]` without sorting the whole row: a partition finds
    the k-th largest score, and only the scores at or above it are sorted. They are taken in
    document order and sorted stably, so ties keep document order as a full sort would. (A
    full argsort of 256 queries × 100,000 documents held 300 MB of temporaries.)"""
    n = len(row)
    if k == 0:
        return np.empty(0, dtype=np.intp)
    if k == n or np.isnan(row).any():  # NaN scores sort last; let the full sort place them
        return np.argsort(-row, kind="stable")[:k]
    kth = np.partition(row, n - k)[n - k]
    candidates = np.flatnonzero(row >= kth)
    return candidates[np.argsort(-row[candidates], kind="stable")[:k]]


def search_by_scores(index: ScoringIndex, queries: list[str], k: int) -> Ranking:
    """`index.search` for any index that scores the whole corpus, QUERY_BATCH queries at a time."""
    parts = [top_k(index.scores(queries[start:start + QUERY_BATCH]), index.doc_ids, k)
             for start in range(0, len(queries), QUERY_BATCH)]
    if not parts:
        return Ranking(ids=[], scores=np.zeros((0, min(k, len(index.doc_ids)))))
    return Ranking(ids=[ids for part in parts for ids in part.ids],
                   scores=np.vstack([part.scores for part in parts]))
