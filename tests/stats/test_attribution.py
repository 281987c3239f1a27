"""The statistics PRISK needs, on hand-computed cases: the mixed-effects attribution model
(REML against ANOVA mean squares; the closed form against statsmodels MixedLM), partial eta
squared, Fisher, BH / Holm, sign-flip test, bootstrap CIs."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri

from personalens.stats import bootstrap, mixed_effects, permutation
from personalens.stats.bootstrap import _percentiles, mean_ci, mean_cis
from personalens.stats.exact_tests import group_gap
from personalens.stats.mixed_effects import cell_table, partial_eta_squared
from personalens.stats.multiple_testing import adjust
from personalens.stats.permutation import sign_flip_test, sign_flip_tests

TERMS = {"profile": "P", "memory": "M", "interaction": "P:M"}


def fit_attribution(table: pd.DataFrame, **options) -> dict:
    """The fit as metrics.json holds it: {profile: {beta, se, p, ci_low, ci_high, eta_p2},
    memory, interaction, variance: {record, residual}}."""

    return mixed_effects.fit_attribution(table, **options).model_dump(exclude_unset=True)


def balanced_reml(means: np.ndarray, coding: str = "treatment") -> dict | None:
    """The closed form's fit as a dict: {effects: {term: {beta, ...}}, record, residual, ...}."""
    fit = mixed_effects.balanced_reml(means, coding)
    return None if fit is None else fit.model_dump(exclude_unset=True)


def _balanced(records: int = 12, seed: int = 1, record_sd: float = 1.0,
              noise_sd: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for record in range(records):
        intercept = rng.normal(0, record_sd)
        for p in (0, 1):
            for m in (0, 1):
                rows.append((f"r{record}", p, m, 3 + intercept + 0.6 * p - 0.4 * m
                             + 0.3 * p * m + rng.normal(0, noise_sd)))
    return pd.DataFrame(rows, columns=["record", "profile", "memory", "score"])


def _statsmodels(table: pd.DataFrame, coding: str, tight: bool = False):
    """The MixedLM fit itself. `tight`: Powell searched to 1e-10, not the lens's default
    L-BFGS, whose stopping rule leaves up to ~3e-5 relative error in the variances."""
    import statsmodels.formula.api as smf

    data = table.assign(P=table["profile"] - (0.5 if coding == "effect" else 0.0),
                        M=table["memory"] - (0.5 if coding == "effect" else 0.0))
    model = smf.mixedlm("score ~ P * M", data, groups=data["record"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if tight:
            return model, model.fit(reml=True, method="powell", xtol=1e-10, ftol=1e-12)
        try:
            return model, model.fit(reml=True, method=["lbfgs", "powell"])
        except np.linalg.LinAlgError:
            return model, model.fit(reml=True, method="powell")


def _as_fit(result) -> dict:
    """A MixedLM result in fit_attribution's shape (without eta)."""
    ci = result.conf_int(alpha=0.05)
    out = {name: {"beta": result.params[t], "se": result.bse[t], "p": result.pvalues[t],
                  "ci_low": ci.loc[t, 0], "ci_high": ci.loc[t, 1]} for name, t in TERMS.items()}
    out["variance"] = {"record": float(np.asarray(result.cov_re)[0, 0]),
                       "residual": result.scale}
    return out


def _mixedlm(table: pd.DataFrame, coding: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit_attribution(table, coding=coding, solver="mixedlm")


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


# --- the closed-form REML fit against statsmodels MixedLM ---------------------------------

# (records, seed, record SD, boundary?): interior fits, a small record variance, and a table
# whose record mean square falls below the residual one (REML's record variance is then 0).
CASES = [(12, 1, 1.0, False), (40, 2, 0.5, False), (25, 3, 2.0, False), (20, 7, 0.0, False),
         (20, 1, 0.0, True)]


@pytest.mark.parametrize("coding", ["treatment", "effect"])
@pytest.mark.parametrize("records, seed, record_sd, boundary", CASES)
def test_closed_form_equals_mixedlm(records, seed, record_sd, boundary, coding):
    table = _balanced(records, seed, record_sd)
    assert balanced_reml(cell_table(table).means, coding)["boundary"] is boundary
    ours = fit_attribution(table, coding=coding, solver="closed_form")
    assert fit_attribution(table, coding=coding) == ours  # "auto" takes the closed form
    # MixedLM searched to convergence agrees to 1e-6: the closed form is the REML optimum
    # MixedLM is looking for. The lens's own MixedLM path stops earlier (L-BFGS's stopping
    # rule): 5e-5, and 2e-4 on the record variance, which the likelihood pins down least.
    mixedlm = _mixedlm(table, coding)
    converged = _as_fit(_statsmodels(table, coding, tight=True)[1])
    for theirs, rel in ((converged, 1e-6), (mixedlm, 5e-5)):
        for effect in TERMS:
            a, b = ours[effect], theirs[effect]
            assert a["beta"] == pytest.approx(b["beta"], rel=rel, abs=1e-9)
            assert a["se"] == pytest.approx(b["se"], rel=rel)
            # p through its z (a p of 1e-20 moves by z^2 times the SE's relative error).
            assert -ndtri(a["p"] / 2) == pytest.approx(-ndtri(b["p"] / 2), rel=rel, abs=1e-9)
            assert a["ci_low"] == pytest.approx(b["ci_low"], abs=rel * b["se"])
            assert a["ci_high"] == pytest.approx(b["ci_high"], abs=rel * b["se"])
        assert ours["variance"]["residual"] == pytest.approx(theirs["variance"]["residual"],
                                                             rel=rel)
        if boundary:
            assert ours["variance"]["record"] == 0.0
            assert theirs["variance"]["record"] < 1e-8 * theirs["variance"]["residual"]
        else:
            assert ours["variance"]["record"] == pytest.approx(theirs["variance"]["record"],
                                                               rel=4 * rel)
    for effect in TERMS:
        assert ours[effect]["eta_p2"] == mixedlm[effect]["eta_p2"]


@pytest.mark.parametrize("coding", ["treatment", "effect"])
@pytest.mark.parametrize("records, seed, record_sd", [(12, 1, 1.0), (20, 1, 0.0)])
def test_the_intercepts_se_carries_the_record_variance(records, seed, record_sd, coding):
    table = _balanced(records, seed, record_sd)
    ours = balanced_reml(cell_table(table).means, coding)
    _, result = _statsmodels(table, coding, tight=True)
    assert ours["effects"]["Intercept"]["beta"] == pytest.approx(result.params["Intercept"],
                                                                 rel=1e-8)
    assert ours["effects"]["Intercept"]["se"] == pytest.approx(result.bse["Intercept"],
                                                               rel=1e-6)
    # By hand: (s2_e + s2_u) / n in treatment coding, (s2_e / 4 + s2_u) / n in effect coding.
    s2_e, s2_u = ours["residual"], ours["record"]
    share = 1.0 if coding == "treatment" else 0.25
    assert ours["effects"]["Intercept"]["se"] ** 2 == pytest.approx(
        (share * s2_e + s2_u) / records, rel=1e-12)


def test_the_closed_form_is_reml_s_maximum_by_statsmodels_own_likelihood():
    from statsmodels.regression.mixed_linear_model import MixedLMParams

    table = _balanced(200, 4, 1.5)
    model, result = _statsmodels(table, "treatment")
    ours = balanced_reml(cell_table(table).means)
    fe = np.array([ours["effects"][t]["beta"] for t in ("Intercept", "P", "M", "P:M")])
    params = MixedLMParams.from_components(
        fe_params=fe, cov_re=np.array([[ours["record"] / ours["residual"]]]))
    # MixedLM's optimiser stops within its tolerance of the maximum; the closed form is on it.
    assert model.loglike(params, profile_fe=True) >= result.llf - 1e-9


def _tiny(shift_c: float = 0.0) -> pd.DataFrame:
    # Scores in cell order (P, M) = (0,0), (1,0), (0,1), (1,1).
    scores = {"a": (1, 3, 2, 6), "b": (2, 2, 4, 4),
              "c": tuple(x + shift_c for x in (3, 7, 3, 5))}
    return pd.DataFrame([(record, p, m, y) for record, ys in scores.items()
                         for (p, m), y in zip(((0, 0), (1, 0), (0, 1), (1, 1)), ys, strict=True)],
                        columns=["record", "profile", "memory", "score"])


def test_a_three_record_table_by_hand():
    fit = fit_attribution(_tiny())
    # Record means a = 12/4 = 3, b = 12/4 = 3, c = 18/4 = 4.5; grand mean 42/12 = 3.5.
    # SS_record = 4 * ((3 - 3.5)^2 + (3 - 3.5)^2 + (4.5 - 3.5)^2) = 4 * 1.5 = 6, on 2 df:
    ms_record = 6 / 2
    # Cell means (0,0) 6/3 = 2, (1,0) 12/3 = 4, (0,1) 9/3 = 3, (1,1) 15/3 = 5. Residuals
    # y - record mean - cell mean + 3.5: a (-.5, -.5, -.5, 1.5), b (.5, -1.5, 1.5, -.5),
    # c (0, 2, -1, -1); SS_res = 3 + 5 + 6 = 14 on 3 * 2 = 6 df:
    ms_residual = 14 / 6
    s2_e, s2_u = ms_residual, (ms_record - ms_residual) / 4  # 7/3 and 1/6
    assert fit["variance"]["residual"] == pytest.approx(7 / 3, rel=1e-12)
    assert fit["variance"]["record"] == pytest.approx(1 / 6, rel=1e-12)
    assert s2_u == pytest.approx(1 / 6)
    # Treatment coding: P = 4 - 2, M = 3 - 2, P:M = 5 - 4 - 3 + 2 = 0.
    assert fit["profile"]["beta"] == pytest.approx(2.0)
    assert fit["memory"]["beta"] == pytest.approx(1.0)
    assert fit["interaction"]["beta"] == pytest.approx(0.0, abs=1e-12)
    assert fit["profile"]["se"] == pytest.approx(np.sqrt(2 * s2_e / 3))  # sqrt(14/9)
    assert fit["memory"]["se"] == pytest.approx(np.sqrt(2 * s2_e / 3))
    assert fit["interaction"]["se"] == pytest.approx(np.sqrt(4 * s2_e / 3))  # sqrt(28/9)
    # z = 2 / sqrt(14/9) = 1.60357; p = 2 * (1 - Phi(z)) = erfc(z / sqrt 2) = 0.108809.
    z = 2 / np.sqrt(14 / 9)
    assert fit["profile"]["p"] == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-12)
    assert fit["profile"]["p"] == pytest.approx(0.108809, abs=1e-6)
    assert fit["interaction"]["p"] == pytest.approx(1.0)
    assert fit["profile"]["ci_low"] == pytest.approx(2 - 1.959964 * np.sqrt(14 / 9), rel=1e-6)
    # Effect coding: P = (4 + 5 - 2 - 3) / 2 = 2 with SE sqrt(s2_e / 3) = sqrt(7/9); the
    # intercept (the mean of the cells, 3.5) has SE sqrt((s2_e / 4 + s2_u) / 3) = 0.5.
    effect = balanced_reml(cell_table(_tiny()).means, "effect")["effects"]
    assert effect["P"]["beta"] == pytest.approx(2.0)
    assert effect["P"]["se"] == pytest.approx(np.sqrt(7 / 9))
    assert effect["Intercept"]["beta"] == pytest.approx(3.5)
    assert effect["Intercept"]["se"] == pytest.approx(0.5)
    treatment = balanced_reml(cell_table(_tiny()).means, "treatment")["effects"]
    assert treatment["Intercept"]["se"] == pytest.approx(np.sqrt((7 / 3 + 1 / 6) / 3))


def test_a_three_record_table_on_the_boundary_by_hand():
    # Record c moved down by 1.5: every record mean is 3, so SS_record = 0 < MS_res * 2; the
    # residuals (and SS_res = 14) do not change. Unconstrained, s2_u = (0 - 7/3) / 4 < 0; REML
    # with s2_u >= 0 puts it at 0 and pools both strata: s2_e = (0 + 14) / (4 * 2) = 1.75.
    fit = fit_attribution(_tiny(shift_c=-1.5))
    assert fit["variance"]["record"] == 0.0
    assert fit["variance"]["residual"] == pytest.approx(14 / 8, rel=1e-12)
    assert fit["profile"]["beta"] == pytest.approx(2.0)  # the shift is the same in all cells
    assert fit["profile"]["se"] == pytest.approx(np.sqrt(2 * 1.75 / 3))
    assert fit["interaction"]["se"] == pytest.approx(np.sqrt(4 * 1.75 / 3))


def test_unbalanced_tables_go_through_mixedlm(monkeypatch):
    table = _balanced(records=15, seed=5)
    missing = table.drop(index=[6])  # record r1 has no (1, 0) score
    doubled = pd.concat([table, table.iloc[[0]].assign(score=4.2)], ignore_index=True)
    # The dispatch: the closed form fails the test if it is called on these...
    monkeypatch.setattr(mixed_effects, "balanced_reml", _forbidden)
    for unbalanced in (missing, doubled):
        assert not cell_table(unbalanced).balanced
        assert fit_attribution(unbalanced) == _mixedlm(unbalanced, "treatment")
        with pytest.raises(ValueError, match="closed form needs"):
            fit_attribution(unbalanced, solver="closed_form")
    # ...and a balanced table never reaches MixedLM.
    monkeypatch.undo()
    monkeypatch.setattr(mixed_effects, "_fit_mixedlm", _forbidden)
    assert fit_attribution(table)["profile"]["se"] > 0


def _forbidden(*args, **kwargs):
    raise AssertionError("this path must not be taken")


# --- the sign-flip test's draws, and the bootstrap's ---------------------------------------


def _sign_flip_reference(d: np.ndarray, resamples: int, seed: int) -> dict:
    """The test as first written: the full sign matrix from `choice` (or every pattern)."""
    n = len(d)
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)
    if 2 ** n <= resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        return {"mean": float(d.mean()), "exact": True, "n": n,
                "p": float(np.mean(np.abs(signs @ d / n) >= observed - tolerance))}
    signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(resamples, n))
    extreme = int(np.sum(np.abs(signs @ d / n) >= observed - tolerance))
    return {"mean": float(d.mean()), "p": (1 + extreme) / (1 + resamples), "exact": False,
            "n": n}


@pytest.mark.parametrize("n, resamples", [(5, 40), (13, 10000), (14, 10000), (15, 999),
                                          (37, 1001), (1001, 300)])
def test_sign_flip_draws_are_the_choice_matrix(n, resamples):
    rng = np.random.default_rng(n)
    for d in (rng.integers(-3, 4, n).astype(float), rng.normal(0.05, 1.0, n),
              0.1 * rng.integers(-1, 2, n)):
        for seed in (0, 11):
            assert sign_flip_test(d, resamples=resamples, seed=seed) == \
                _sign_flip_reference(d, resamples, seed)


def test_sign_flip_draws_across_chunks(monkeypatch):
    # Room for 3 rows of 37 signs (111, an odd count: a word would straddle two chunks), so
    # chunks of 2 rows (37 raw words each), and a last chunk of one row that ends half way
    # through a word.
    monkeypatch.setattr(permutation, "_CHUNK_VALUES", 111)
    d = np.random.default_rng(6).normal(0.2, 1.0, 37)
    for seed in (0, 1):
        assert sign_flip_test(d, resamples=1001, seed=seed) == \
            _sign_flip_reference(d, 1001, seed)


def test_sign_flip_monte_carlo_by_hand():
    # All-ones differences: only a draw with every sign equal reaches |mean| = 1. Count those
    # among the 999 documented draws (`choice` rows); p = (1 + count) / 1000.
    signs = np.random.default_rng(3).choice((1.0, -1.0), size=(999, 12))
    count = int(np.sum(np.abs(signs.sum(axis=1)) == 12))
    assert sign_flip_test(np.ones(12), resamples=999, seed=3)["p"] == (1 + count) / 1000
    # Differences (4, 0, ..., 0) over 16 records: |mean*| = 1/4 = |mean| whatever the signs,
    # so every draw is as extreme: p = (1 + 999) / 1000.
    assert sign_flip_test(np.r_[4.0, np.zeros(15)], resamples=999)["p"] == 1.0


def test_sign_flip_tests_share_draws_and_equal_separate_calls():
    rng = np.random.default_rng(8)
    columns = [rng.normal(0.1, 1, 40), rng.normal(0, 1, 40), rng.normal(0, 1, 25),
               np.array([1.0, 2.0, 3.0]), np.array([])]
    assert sign_flip_tests(columns, resamples=2000, seed=4) == [
        sign_flip_test(c, resamples=2000, seed=4) for c in columns]


@pytest.mark.parametrize("block", [1 << 21, 3000])
def test_bootstrap_blocks_are_the_one_big_draw(monkeypatch, block):
    monkeypatch.setattr(bootstrap, "_CHUNK_VALUES", block)  # 3000: one row of 5000 a block
    rng = np.random.default_rng(2)
    columns = [rng.normal(size=5000), rng.integers(1, 6, 5000), rng.normal(size=7),
               np.array([])]
    for values in columns[:3]:
        rows = np.random.default_rng(9).integers(0, len(values), (1000, len(values)))
        assert mean_ci(values, seed=9) == _percentiles(
            np.asarray(values, dtype=float)[rows].mean(axis=1), 0.95)
    assert mean_cis(columns, seed=9) == [mean_ci(c, seed=9) for c in columns]
