"""Two systems scored on the same units (questions, queries, records): the difference of a
statistic, its paired bootstrap CI, and a paired test.

Pairing is what makes two runs on one dataset comparable at small n: every resample and every
permutation keeps a unit's two values together, so the unit-to-unit spread (easy and hard
items) cancels out of the difference.

- The CI resamples units (rows), with the draws of `stats.bootstrap` for the same seed, and
  takes `statistic(a[idx]) - statistic(b[idx])` on each; resamples where either side is
  undefined are counted, not silently dropped.
- The test depends on the outcome:
  - 0/1 outcomes compared by their mean: the exact McNemar test, a two-sided binomial test of
    the discordant units (a right and b wrong against a wrong and b right) at 1/2
    (scipy.stats.binomtest);
  - any other mean: the sign-flip permutation test of the per-unit differences
    (`stats.permutation`);
  - any other statistic (a ratio such as NormAlign): the paired permutation test, which swaps
    a unit's two rows with probability 1/2; exact when every swap pattern fits in
    `permutations`, else Monte Carlo with the +1 correction. For a mean it is the sign-flip
    test.
"""

from collections.abc import Callable, Iterator
from itertools import product
from typing import ClassVar

import numpy as np

from personalens.stats.bootstrap import bootstrap_ci_counted
from personalens.stats.estimate import Estimate
from personalens.stats.permutation import sign_flip_test

Statistic = Callable[[np.ndarray], float | None]


class PairedDifference(Estimate):
    """statistic(a) - statistic(b) on n shared units, written {diff, ci_low, ci_high, n,
    undefined_resamples, p, test}: its paired bootstrap CI (resamples where either side is
    undefined are counted, and left out) and the paired test's two-sided p."""

    value_key: ClassVar[str] = "diff"

    undefined_resamples: int = 0
    p: float | None = None
    test: str | None = None  # mcnemar_exact, sign_flip or paired_permutation


def column_mean(rows: np.ndarray) -> float | None:
    """The default statistic: the mean of the units' (first) values."""
    return float(rows[:, 0].mean()) if len(rows) else None


def paired_difference(a: np.ndarray, b: np.ndarray, statistic: Statistic | None = None, *,
                      binary: bool = False, resamples: int = 1000, permutations: int = 10000,
                      seed: int = 0) -> PairedDifference:
    """The `PairedDifference` statistic(a) - statistic(b).

    `a` and `b` hold one row (or value) per shared unit, in the same unit order. Without a
    statistic the difference is of means; `binary` says the values are 0/1 outcomes (McNemar).
    """
    a, b = _rows(a), _rows(b)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in shape: {a.shape} and {b.shape}")
    mean = statistic is None
    statistic = statistic or column_mean
    diff = _difference(statistic, a, b)
    low, high, undefined = bootstrap_ci_counted(
        np.concatenate([a, b], axis=1),
        lambda rows: _difference(statistic, rows[:, :a.shape[1]], rows[:, a.shape[1]:]),
        resamples=resamples, seed=seed)
    if mean and binary:
        test, p = "mcnemar_exact", mcnemar_exact(a[:, 0], b[:, 0])
    elif mean:
        test, p = "sign_flip", sign_flip_test(a[:, 0] - b[:, 0], resamples=permutations,
                                              seed=seed)["p"]
    else:
        test, p = "paired_permutation", paired_permutation_p(a, b, statistic,
                                                             permutations=permutations, seed=seed)
    return PairedDifference(value=diff, ci_low=low, ci_high=high, n=len(a),
                            undefined_resamples=undefined, p=p, test=test)


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided exact McNemar p of paired 0/1 outcomes; 1.0 with no discordant unit."""
    from scipy.stats import binomtest

    a, b = np.asarray(a).astype(bool), np.asarray(b).astype(bool)
    if len(a) == 0:
        return None
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return 1.0
    return float(binomtest(only_a, only_a + only_b, 0.5).pvalue)


def paired_permutation_p(a: np.ndarray, b: np.ndarray, statistic: Statistic, *,
                         permutations: int = 10000, seed: int = 0) -> float | None:
    """Two-sided p of statistic(a) - statistic(b) under swapping each unit's pair."""
    observed = _difference(statistic, a, b)
    n = len(a)
    if observed is None or n == 0:
        return None
    exact = 2 ** n <= permutations
    extreme = 0
    for swap in _swaps(n, exact, permutations, seed):
        value = _difference(statistic, np.where(swap[:, None], b, a),
                            np.where(swap[:, None], a, b))
        # An undefined arrangement is as extreme as any: it cannot count against the null.
        if value is None or abs(value) >= abs(observed) - 1e-12 * max(1.0, abs(observed)):
            extreme += 1
    return extreme / 2 ** n if exact else (1 + extreme) / (1 + permutations)


def _swaps(n: int, exact: bool, permutations: int, seed: int) -> Iterator[np.ndarray]:
    """Every swap pattern of n units, or `permutations` random ones, one at a time: a block
    of them all would hold permutations x n flags (a large run's pairs: gigabytes). The random
    rows are those of one `random((permutations, n))` draw."""
    if exact:
        yield from (np.array(pattern) for pattern in product((False, True), repeat=n))
        return
    rng = np.random.default_rng(seed)
    for _ in range(permutations):
        yield rng.random(n) < 0.5


def _difference(statistic: Statistic, a: np.ndarray, b: np.ndarray) -> float | None:
    left, right = statistic(a), statistic(b)
    return None if left is None or right is None else float(left - right)


def _rows(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return values[:, None] if values.ndim == 1 else values
