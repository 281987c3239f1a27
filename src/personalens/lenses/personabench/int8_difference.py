"""What int8 costs on this run's own data: each `<retriever>-int8` against its fp32 retriever.

When a run evaluates both (`--retriever minilm,minilm-int8`, or two hybrids that differ only by
the suffix), every noise level gets the paired difference int8 − fp32 of mean recall and nDCG
(and answer F1 when the run answers) over the questions both scored, with the compare
machinery's paired bootstrap CI and sign-flip test (`stats.paired`), Holm-adjusted across the
run's table, and how many questions changed their value at all.
"""

from collections.abc import Iterable

import numpy as np

from personalens.lenses.personabench.metrics import Int8Difference
from personalens.retrieval.int8_encoder import split_int8
from personalens.stats.multiple_testing import adjust
from personalens.stats.paired import paired_difference

METRICS = ("recall", "ndcg", "f1")


def int8_pairs(retrievers: Iterable[str]) -> list[tuple[str, str]]:
    """(int8 retriever, its fp32 retriever) for every int8 retriever whose base is also run."""
    names = set(retrievers)
    pairs = []
    for name in sorted(names):
        base, int8 = split_int8(name)
        if int8 and base in names:
            pairs.append((name, base))
    return pairs


def int8_differences(values: dict[tuple[str, str, str], dict[tuple[str, str], float]],
                     seed: int = 0) -> list[Int8Difference]:
    """The table of paired differences.

    `values` maps (retriever, noise, metric) to {(community, q_id): value}; a metric a
    condition did not score (F1 in a retrieval-only run) is simply absent. An int8 retriever
    is named by its fp32 retriever's name plus `-int8` (so `hybrid:bm25+minilm-int8` pairs with
    `hybrid:bm25+minilm`).
    """
    retrievers = {retriever for retriever, _, _ in values}
    noises = sorted({noise for _, noise, _ in values}, key=float)
    rows = []
    for int8, fp32 in int8_pairs(retrievers):
        for noise in noises:
            for metric in METRICS:
                a, b = values.get((int8, noise, metric)), values.get((fp32, noise, metric))
                if a is None or b is None:
                    continue
                units = sorted(a.keys() & b.keys())
                if not units:
                    continue
                x, y = np.array([a[u] for u in units]), np.array([b[u] for u in units])
                test = paired_difference(x, y, seed=seed)
                rows.append(Int8Difference(
                    int8=int8, fp32=fp32, noise=float(noise), metric=metric,
                    int8_value=float(x.mean()), fp32_value=float(y.mean()),
                    **test.model_dump(exclude={"undefined_resamples"}),
                    changed=int(np.sum(~np.isclose(x, y, rtol=0, atol=1e-12)))))
    for row, p_adj in zip(rows, adjust([r.p for r in rows], "holm"), strict=True):
        row.p_holm = p_adj
    return rows
