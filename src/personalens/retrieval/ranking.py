"""What a retriever returns, and the protocol every retriever implements."""

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Document:
    id: str
    text: str


@dataclass(frozen=True)
class Ranking:
    """Top-k ids and scores per query, best first."""

    ids: list[list[str]]
    scores: np.ndarray  # (n_queries, k)


class Index(Protocol):
    def search(self, queries: list[str], k: int) -> Ranking: ...


class Retriever(Protocol):
    name: str

    def index(self, docs: list[Document]) -> Index: ...


def top_k(scores: np.ndarray, doc_ids: list[str], k: int) -> Ranking:
    """Rank a dense (n_queries, n_docs) score matrix; ties keep document order (stable)."""
    k = min(k, scores.shape[1])
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return Ranking(
        ids=[[doc_ids[j] for j in row] for row in order],
        scores=np.take_along_axis(scores, order, axis=1),
    )
