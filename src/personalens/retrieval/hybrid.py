"""Hybrid retrieval: several retrievers' scores, min-max normalised per query, summed with weights.

Min-max puts BM25's unbounded scores, a dense model's cosines and SPLADE's dot products on one
[0, 1] scale for each query, so a weight means the same thing whatever the component. A query on
which a component gives every document the same score (BM25 when no query term occurs in the
corpus) gets 0 from it for every document: it cannot tell documents apart, so it adds nothing.
"""

import math

import numpy as np

from personalens.errors import InputError
from personalens.retrieval.ranking import (
    Document,
    Ranking,
    Retriever,
    ScoringIndex,
    search_by_scores,
)

DEFAULT_HYBRID = "bm25+minilm"


def parse_components(spec: str, name: str) -> list[tuple[str, float]]:
    """`bm25=0.3+minilm=0.7` -> [("bm25", 0.3), ("minilm", 0.7)]; a missing weight is 1.

    A trailing `=<number>` is a weight; anything else after `=` stays part of the name, so
    a path containing `=` still works.
    """
    components = []
    for part in spec.split("+"):
        component, weight = _weighted(part.strip(), name)
        if not component:
            raise InputError(f"retriever {name!r}: empty component; expected "
                             "hybrid:<a>+<b>[+<c>], each optionally <name>=<weight>")
        components.append((component, weight))
    if len(components) < 2:
        raise InputError(f"retriever {name!r}: a hybrid needs at least two components, "
                         "e.g. hybrid:bm25+minilm")
    names = [c for c, _ in components]
    if len(set(names)) != len(names):
        raise InputError(f"retriever {name!r}: a component is listed twice")
    if all(w == 0 for _, w in components):
        raise InputError(f"retriever {name!r}: at least one weight must be above 0")
    return components


def _weighted(part: str, name: str) -> tuple[str, float]:
    component, sep, weight = part.rpartition("=")
    if not sep:
        return part, 1.0
    try:
        value = float(weight)
    except ValueError:
        return part, 1.0
    if not math.isfinite(value) or value < 0:
        raise InputError(f"retriever {name!r}: weight {weight!r} of {component!r} must be a "
                         "finite number >= 0")
    return component, value


def min_max(scores: np.ndarray) -> np.ndarray:
    """Each row scaled to [0, 1]; a constant row becomes all zeros."""
    low = scores.min(axis=1, keepdims=True)
    span = scores.max(axis=1, keepdims=True) - low
    return np.divide(scores - low, span, out=np.zeros_like(scores, dtype=np.float64),
                     where=span > 0)


class HybridRetriever:
    def __init__(self, components: list[tuple[Retriever, float]], *, name: str):
        self.name = name
        self.components = components

    def close(self) -> None:
        for retriever, _ in self.components:
            retriever.close()

    def index(self, docs: list[Document]) -> "HybridIndex":
        indexes = []
        for retriever, weight in self.components:
            index = retriever.index(docs)
            if not isinstance(index, ScoringIndex):
                raise InputError(f"retriever {self.name!r}: {retriever.name!r} does not score "
                                 "the whole corpus, so it cannot be fused")
            indexes.append((index, weight))
        return HybridIndex(indexes, [d.id for d in docs])


class HybridIndex:
    def __init__(self, components: list[tuple[ScoringIndex, float]], doc_ids: list[str]):
        self.components = components
        self.doc_ids = doc_ids

    def scores(self, queries: list[str]) -> np.ndarray:
        fused = np.zeros((len(queries), len(self.doc_ids)))
        for index, weight in self.components:
            fused += weight * min_max(np.asarray(index.scores(queries), dtype=np.float64))
        return fused

    def search(self, queries: list[str], k: int) -> Ranking:
        return search_by_scores(self, queries, k)
