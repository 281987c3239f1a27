"""metrics.json for a PQB run, from its records (one per released query record).

Each record holds the rank (1-based, within the top MAX_K) of its target item for the user's
clean query, their typo query and (built datasets only) the random-typo baseline with as many
edited words (None: not retrieved or no such query). Pairs are two users' clean queries for the
same item. `clean` covers every query; `clean_on_typo` and the drops cover exactly the queries
with a typo version (paired: the same queries, clean minus typo).
"""

from itertools import combinations

import numpy as np

from personalens.lenses.pqb.records import EvalRecord
from personalens.lenses.pqb.typo_edits import edit_counts
from personalens.retrieval.metrics import flip_rate
from personalens.stats import Estimate, bootstrap_ci

KS = (1, 5, 10, 20)
MAX_K = max(KS)


def _hits(ranks: list[int | None], k: int) -> np.ndarray:
    return np.array([r is not None and r <= k for r in ranks], dtype=float)


def _rr(ranks: list[int | None]) -> np.ndarray:
    return np.array([0.0 if r is None else 1.0 / r for r in ranks])


def pairs(records: list[EvalRecord]) -> list[tuple[EvalRecord, EvalRecord]]:
    by_item: dict[str, list[EvalRecord]] = {}
    for r in sorted(records, key=lambda r: r.key):
        by_item.setdefault(r.parent_asin, []).append(r)
    return [pair for group in by_item.values() for pair in combinations(group, 2)]


_HEADS = dict.fromkeys(("top_clean", "top_typo", "top_random_typo"))


def scored(record: EvalRecord) -> EvalRecord:
    """What the metrics read of a record (not the rankings' heads kept for the browser), so a
    large run's summary holds a few fields per query."""
    return record.model_copy(update=_HEADS)


def summarise(records: list[EvalRecord], seed: int = 0) -> dict:
    records = sorted(records, key=lambda r: r.key)
    both = pairs(records)
    a = [p[0].rank_clean for p in both]
    b = [p[1].rank_clean for p in both]
    typo = [r for r in records if r.typo_query is not None]
    rand = [r for r in records if r.random_typo_query is not None]
    metrics: dict = {"n_queries": len(records), "n_pairs": len(both), "n_typo": len(typo),
                     "n_random_typo": len(rand), "flip_rate": {"paper": {}, "all_pairs": {}},
                     "hit": {kind: {} for kind in ("clean", "clean_on_typo", "typo", "drop",
                                                   "random_typo", "random_drop",
                                                   "personal_minus_random")}}
    hit = metrics["hit"]
    for k in KS:
        hits = np.column_stack([_hits(a, k), _hits(b, k)]) if both else np.zeros((0, 2))
        for name, conditioned in (("paper", True), ("all_pairs", False)):
            def rate(rows, conditioned=conditioned):
                return flip_rate(rows[:, 0], rows[:, 1], conditioned=conditioned)
            metrics["flip_rate"][name][str(k)] = Estimate.with_bounds(
                rate(hits) if both else None, bootstrap_ci(hits, rate, seed=seed))
        clean = _hits([r.rank_clean for r in typo], k)
        typos = _hits([r.rank_typo for r in typo], k)
        hit["clean"][str(k)] = Estimate.of_mean(_hits([r.rank_clean for r in records], k),
                                                seed=seed)
        hit["typo"][str(k)] = Estimate.of_mean(typos, seed=seed)
        # Clean hits on exactly the queries that have a typo version: the fair comparison.
        hit["clean_on_typo"][str(k)] = Estimate.of_mean(clean, seed=seed)
        # Paired: the same users' queries, clean minus typo.
        hit["drop"][str(k)] = Estimate.of_mean(clean - typos, seed=seed)
        # The baseline: random typos on the same queries, with as many edited words.
        # personal_minus_random < 0: the users' own typos hurt retrieval more than random ones.
        clean, typos = _hits([r.rank_clean for r in rand], k), _hits([r.rank_typo for r in rand], k)
        random_typo = _hits([r.rank_random_typo for r in rand], k)
        hit["random_typo"][str(k)] = Estimate.of_mean(random_typo, seed=seed)
        hit["random_drop"][str(k)] = Estimate.of_mean(clean - random_typo, seed=seed)
        hit["personal_minus_random"][str(k)] = Estimate.of_mean(typos - random_typo, seed=seed)
    # What the typo queries actually do to the words, by kind (PQB's mechanisms).
    metrics["typo_edit_kinds"] = {
        "typo": dict(edit_counts([(r.syntax_query, r.typo_query) for r in typo])),
        "random_typo": dict(edit_counts([(r.syntax_query, r.random_typo_query)
                                         for r in rand]))}
    metrics["mrr"] = {
        name: Estimate.of_mean(_rr([getattr(r, field) for r in rows]), seed=seed)
        for name, field, rows in (("clean", "rank_clean", records),
                                  ("clean_on_typo", "rank_clean", typo),
                                  ("typo", "rank_typo", typo),
                                  ("random_typo", "rank_random_typo", rand))}
    return metrics
