"""Paired differences between two systems on the same units: hand-computed cases."""

import numpy as np
import pytest

from personalens.stats.paired import mcnemar_exact, paired_difference, paired_permutation_p


def test_binary_outcomes_take_the_exact_mcnemar_test():
    a = np.array([1, 1, 1, 1, 0, 0, 1, 0])
    b = np.array([0, 0, 0, 1, 0, 1, 1, 0])
    # Discordant: a alone right on 3 units, b alone on 1. Two-sided exact binomial at 1/2:
    # P(X <= 1 or X >= 3), X ~ Bin(4, 1/2) = (1 + 4 + 4 + 1) / 16. (The chi-square McNemar
    # gives 0.317, the one-sided test 0.3125.)
    result = paired_difference(a, b, binary=True)
    assert result.test == "mcnemar_exact"
    assert result.p == pytest.approx(10 / 16)
    assert result.value == pytest.approx(5 / 8 - 3 / 8) and result.n == 8
    assert mcnemar_exact(a, a) == 1.0 and mcnemar_exact(np.array([]), np.array([])) is None
    # 7 discordant, all one way: 2 * (1/2)^7.
    assert mcnemar_exact(np.ones(7), np.zeros(7)) == pytest.approx(2 / 128)


def test_the_bootstrap_keeps_each_unit_paired():
    rng = np.random.default_rng(1)
    b = rng.normal(0, 5, size=40)  # units differ a lot from each other
    a = b + 0.5  # and system a is better by exactly 0.5 on every one
    result = paired_difference(a, b)
    # Every paired resample's difference is 0.5; an unpaired bootstrap would spread over
    # several units' worth of the between-unit spread.
    assert (result.value, result.ci_low, result.ci_high) == pytest.approx((0.5, 0.5, 0.5))
    assert result.test == "sign_flip" and result.p < 1e-3


def test_the_ci_is_the_percentiles_of_resampled_unit_differences():
    a = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    b = np.array([2.0, 7.0, 1.0, 8.0, 2.0, 8.0])
    result = paired_difference(a, b, resamples=200, seed=3)
    rng = np.random.default_rng(3)  # the draws of stats.bootstrap: one index row per resample
    diffs = []
    for _ in range(200):
        idx = rng.integers(0, 6, 6)
        diffs.append(a[idx].mean() - b[idx].mean())
    assert result.ci_low == pytest.approx(np.quantile(diffs, 0.025))
    assert result.ci_high == pytest.approx(np.quantile(diffs, 0.975))
    assert result.value == pytest.approx(23 / 6 - 28 / 6)
    # Sign-flip, exact over 2^6 patterns: |mean| >= 5/6 for d = 1, -6, 3, -7, 3, 1.
    d = a - b
    signs = np.array([[1 - 2 * ((i >> j) & 1) for j in range(6)] for i in range(64)])
    assert result.p == pytest.approx(np.mean(np.abs(signs @ d) >= 5 - 1e-9))


def ratio(rows):
    return rows[:, 0].sum() / rows[:, 1].sum()


def test_a_ratio_statistic_is_tested_by_swapping_each_units_pair():
    a = np.array([[1, 1], [2, 1], [3, 1]])
    b = np.array([[1, 1], [1, 1], [1, 2]])
    # statistic(a) = 6/3 = 2, statistic(b) = 3/4: diff 1.25. The 8 swap patterns give
    # +-1.25 (no swap or unit 0 only, and their mirrors) and +-2/3 (unit 1 or 2 swapped):
    # |diff| >= 1.25 in 4 of 8. (One-sided: 2 of 8.)
    assert paired_permutation_p(a, b, ratio) == pytest.approx(4 / 8)
    result = paired_difference(a, b, ratio)
    assert result.test == "paired_permutation"
    assert result.value == pytest.approx(1.25) and result.p == pytest.approx(0.5)


def test_unpaired_shapes_are_refused():
    with pytest.raises(ValueError, match="differ in shape"):
        paired_difference(np.ones(3), np.ones(4))
