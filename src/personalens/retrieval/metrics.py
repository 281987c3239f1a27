"""IR metrics over a binary relevance matrix: one row per query, one column per rank."""

from collections.abc import Sequence

import numpy as np


def relevance_matrix(retrieved: Sequence[Sequence[str]], relevant: Sequence[set[str]],
                     k: int) -> np.ndarray:
    """Bool (n_queries, k): True where rank j of query i holds a relevant id seen first there.

    A repeated id counts once, at its first rank, so no metric can exceed 1.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    matrix = np.zeros((len(retrieved), k), dtype=bool)
    for i, (ranked, gold) in enumerate(zip(retrieved, relevant, strict=True)):
        seen: set[str] = set()
        for j, doc_id in enumerate(ranked[:k]):
            if doc_id in gold and doc_id not in seen:
                matrix[i, j] = True
            seen.add(doc_id)
    return matrix


def _n_relevant(relevant: Sequence[set[str]]) -> np.ndarray:
    return np.fromiter((len(g) for g in relevant), dtype=float, count=len(relevant))


def recall_at_k(rel: np.ndarray, relevant: Sequence[set[str]]) -> np.ndarray:
    """|relevant in top k| / |relevant|; 0 for a query with no relevant ids."""
    n = _n_relevant(relevant)
    return np.divide(rel.sum(axis=1), n, out=np.zeros(len(n)), where=n > 0)


def ndcg_at_k(rel: np.ndarray, relevant: Sequence[set[str]]) -> np.ndarray:
    """Binary-relevance nDCG; the ideal DCG fills min(|relevant|, k) top ranks."""
    k = rel.shape[1]
    discounts = 1.0 / np.log2(np.arange(k) + 2.0)
    dcg = (rel * discounts).sum(axis=1)
    ideal_ranks = np.minimum(_n_relevant(relevant), k).astype(int)
    idcg = np.concatenate([[0.0], np.cumsum(discounts)])[ideal_ranks]
    return np.divide(dcg, idcg, out=np.zeros(len(dcg)), where=idcg > 0)


def hit_at_k(rel: np.ndarray) -> np.ndarray:
    """1.0 where any relevant id is in the top k."""
    return rel.any(axis=1).astype(float)


def mrr(rel: np.ndarray) -> np.ndarray:
    """Reciprocal rank of the first relevant id within the matrix's k ranks; 0 if none."""
    first = rel.argmax(axis=1)
    return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)


def flips(hit_a: np.ndarray, hit_b: np.ndarray) -> np.ndarray:
    """1.0 where exactly one query of a pair finds the item in its top k."""
    return (hit_a.astype(bool) != hit_b.astype(bool)).astype(float)


def flip_rate(hit_a: np.ndarray, hit_b: np.ndarray, *, conditioned: bool) -> float | None:
    """Share of query pairs (same item, two phrasings) where exactly one query hits.

    conditioned=True is PersonalQuery-Benchmark's paper definition: only pairs where at least
    one query hits count. conditioned=False is its released code's: every pair counts. None
    when no pair qualifies.
    """
    flipped = flips(hit_a, hit_b)
    eligible = (hit_a.astype(bool) | hit_b.astype(bool)) if conditioned else np.ones_like(flipped,
                                                                                           bool)
    return float(flipped[eligible].mean()) if eligible.any() else None
