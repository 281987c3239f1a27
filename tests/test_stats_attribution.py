"""The statistics PRISK needs, on hand-computed cases: the mixed-effects attribution model
(REML against ANOVA mean squares), partial eta squared, Fisher, BH / Holm, sign-flip test."""

import numpy as np
import pandas as pd
import pytest

from personalens.stats.exact_tests import group_gap
from personalens.stats.mixed_effects import fit_attribution, partial_eta_squared
from personalens.stats.multiple_testing import adjust
from personalens.stats.permutation import sign_flip_test


def _balanced(records: int = 12, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for record in range(records):
        intercept = rng.normal(0, 1.0)
        for p in (0, 1):
            for m in (0, 1):
                rows.append((f"r{record}", p, m, 3 + intercept + 0.6 * p - 0.4 * m
                             + 0.3 * p * m + rng.normal(0, 0.5)))
    return pd.DataFrame(rows, columns=["record", "profile", "memory", "score"])


def _anova(table: pd.DataFrame) -> dict:
    """Mean squares of the balanced 2x2 within-record design, computed from their definitions."""
    y = table.pivot_table(index="record", columns=["profile", "memory"], values="score")
    n, grand = len(y), y.values.mean()
    cells = y.mean(axis=0)
    record_means = y.mean(axis=1)
    ss_record = 4 * ((record_means - grand) ** 2).sum()
    ss_total = ((y.values - grand) ** 2).sum()
    ss_cells = n * ((cells - grand) ** 2).sum()
    ss_error = ss_total - ss_record - ss_cells
    df_error = (n - 1) * 3
    ms_record, ms_error = ss_record / (n - 1), ss_error / df_error
    return {"n": n, "cells": cells, "ms_record": ms_record, "ms_error": ms_error, "y": y}


def test_reml_estimates_equal_the_anova_mean_square_solution():
    table = _balanced()
    fit = fit_attribution(table)
    a = _anova(table)
    cells = a["cells"]
    # Treatment coding: the fixed effects are cell-mean contrasts.
    assert fit["profile"]["beta"] == pytest.approx(cells[(1, 0)] - cells[(0, 0)], abs=1e-6)
    assert fit["memory"]["beta"] == pytest.approx(cells[(0, 1)] - cells[(0, 0)], abs=1e-6)
    assert fit["interaction"]["beta"] == pytest.approx(
        cells[(1, 1)] - cells[(1, 0)] - cells[(0, 1)] + cells[(0, 0)], abs=1e-6)
    # REML variance components of a balanced random-intercept design.
    assert fit["variance"]["residual"] == pytest.approx(a["ms_error"], rel=1e-4)
    assert fit["variance"]["record"] == pytest.approx((a["ms_record"] - a["ms_error"]) / 4,
                                                      rel=1e-4)
    # SE of a simple contrast of two cells: sqrt(2 * sigma_e^2 / n).
    assert fit["profile"]["se"] == pytest.approx(np.sqrt(2 * a["ms_error"] / a["n"]), rel=1e-4)
    assert fit["interaction"]["se"] == pytest.approx(np.sqrt(4 * a["ms_error"] / a["n"]),
                                                     rel=1e-4)
    low, high = fit["profile"]["ci_low"], fit["profile"]["ci_high"]
    assert (low + high) / 2 == pytest.approx(fit["profile"]["beta"])
    assert high - low == pytest.approx(2 * 1.959964 * fit["profile"]["se"], rel=1e-4)


def test_effect_coding_moves_the_main_effects_to_averages():
    table = _balanced()
    fit = fit_attribution(table, coding="effect")
    cells = _anova(table)["cells"]
    profile = (cells[(1, 0)] + cells[(1, 1)] - cells[(0, 0)] - cells[(0, 1)]) / 2
    assert fit["profile"]["beta"] == pytest.approx(profile, abs=1e-6)
    # The interaction does not depend on the coding.
    assert fit["interaction"]["beta"] == pytest.approx(
        fit_attribution(table)["interaction"]["beta"], abs=1e-6)


def test_partial_eta_squared_uses_each_effects_own_error_term():
    table = _balanced()
    y = _anova(table)["y"]
    n = len(y)
    # Profile main effect: per-record contrast of profile means; SS = n * mean^2 * (4/4)...
    profile = (y[(1, 0)] + y[(1, 1)] - y[(0, 0)] - y[(0, 1)]) / 2
    ss_effect = n * profile.mean() ** 2
    ss_error = ((profile - profile.mean()) ** 2).sum()
    assert partial_eta_squared(table)["profile"] == pytest.approx(
        ss_effect / (ss_effect + ss_error), rel=1e-6)
    interaction = (y[(1, 1)] - y[(1, 0)] - y[(0, 1)] + y[(0, 0)]) / 2
    ss_effect = n * interaction.mean() ** 2
    ss_error = ((interaction - interaction.mean()) ** 2).sum()
    assert partial_eta_squared(table)["interaction"] == pytest.approx(
        ss_effect / (ss_effect + ss_error), rel=1e-6)


def test_fisher_on_the_tea_tasting_table():
    two = group_gap(3, 4, 1, 4)
    assert two["p"] == pytest.approx(34 / 70)  # (1 + 16 + 16 + 1) / C(8, 4)
    assert two["odds_ratio"] == pytest.approx(9.0)
    assert (two["rate_in"], two["rate_out"], two["gap"]) == (0.75, 0.25, 0.5)
    assert group_gap(3, 4, 1, 4, "greater")["p"] == pytest.approx(17 / 70)
    assert group_gap(3, 4, 1, 4, "less")["p"] == pytest.approx(69 / 70)
    assert group_gap(1, 2, 0, 0)["p"] is None


def test_benjamini_hochberg_and_holm_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    assert adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # An untestable cell stays None and is not counted: two tests, not three.
    assert adjust([0.01, None, 0.04], "bh") == [pytest.approx(0.02), None, pytest.approx(0.04)]


def test_sign_flip_exact_and_monte_carlo():
    exact = sign_flip_test(np.array([1.0, 2.0, 3.0]))
    # Of the 8 sign patterns only +++ and --- reach |mean| = 2.
    assert exact == {"mean": 2.0, "p": 0.25, "exact": True, "n": 3}
    sampled = sign_flip_test(np.ones(20), resamples=999, seed=3)
    assert not sampled["exact"]
    # At most a couple of draws are all-one-sign: p is (1 + that) / 1000, never 0.
    assert 1 / 1000 <= sampled["p"] <= 3 / 1000
    null = sign_flip_test(np.array([1.0, -1.0, 2.0, -2.0]))
    assert null["p"] == 1.0


def test_partial_eta_squared_equals_statsmodels_anova_rm():
    from statsmodels.stats.anova import AnovaRM

    table = _balanced(records=15, seed=5)
    anova = AnovaRM(table, "score", "record", within=["profile", "memory"]).fit().anova_table
    ours = partial_eta_squared(table)
    for name, row in (("profile", "profile"), ("memory", "memory"),
                      ("interaction", "profile:memory")):
        f, df1, df2 = (anova.loc[row, c] for c in ("F Value", "Num DF", "Den DF"))
        assert ours[name] == pytest.approx(f * df1 / (f * df1 + df2), rel=1e-9)
