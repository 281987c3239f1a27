"""stats.Estimate, by hand: the keys it is written under, what it reads back, and the
estimates the bootstrap helpers make (a swapped bound, a dropped n or a renamed key fails)."""

import math

import numpy as np
import pytest

from personalens.runs import Metrics
from personalens.stats.bootstrap import bootstrap_ci
from personalens.stats.estimate import (
    BOOTSTRAP,
    CLOPPER_PEARSON,
    Estimate,
    MeanEstimate,
    SideBySide,
)
from personalens.stats.fits import Coefficient
from personalens.stats.paired import PairedDifference


def test_an_estimate_is_written_value_low_high_n_and_read_back():
    estimate = Estimate(value=0.5, ci_low=0.25, ci_high=0.75, n=4)
    written = estimate.model_dump(mode="json", exclude_unset=True)
    assert written == {"value": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 4}
    assert list(written) == ["value", "ci_low", "ci_high", "n"]
    assert Estimate.model_validate(written) == estimate
    assert estimate.bounds == (0.25, 0.75)
    assert estimate.method == BOOTSTRAP and "method" not in estimate.model_dump()


def test_n_not_given_is_not_written_and_a_given_n_of_zero_is():
    assert Estimate.with_bounds(0.2, (0.1, 0.3)).model_dump(exclude_unset=True) == {
        "value": 0.2, "ci_low": 0.1, "ci_high": 0.3}
    assert Estimate.with_bounds(None, (None, None), 0).model_dump(exclude_unset=True) == {
        "value": None, "ci_low": None, "ci_high": None, "n": 0}


def test_with_bounds_takes_low_then_high():
    estimate = Estimate.with_bounds(0.5, (0.1, 0.9), 10, method=CLOPPER_PEARSON)
    assert (estimate.ci_low, estimate.ci_high, estimate.n) == (0.1, 0.9, 10)
    assert estimate.method == CLOPPER_PEARSON


def test_of_mean_is_the_mean_and_the_percentile_bootstrap_of_the_documented_draw():
    values = np.array([0.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    estimate = Estimate.of_mean(values, seed=3)
    rows = np.random.default_rng(3).integers(0, 6, (1000, 6))
    means = values[rows].mean(axis=1)
    assert estimate.value == pytest.approx(4 / 6) and estimate.n == 6
    assert estimate.ci_low == pytest.approx(np.quantile(means, 0.025))
    assert estimate.ci_high == pytest.approx(np.quantile(means, 0.975))
    assert estimate.ci_low < estimate.value < estimate.ci_high
    # The same interval as bootstrap_ci of the mean over the same units and seed.
    assert estimate.bounds == pytest.approx(bootstrap_ci(values, np.mean, seed=3))


def test_of_mean_of_nothing_is_undefined_over_zero_units():
    assert Estimate.of_mean([]).model_dump(exclude_unset=True) == {
        "value": None, "ci_low": None, "ci_high": None, "n": 0}


def test_a_mean_estimate_keeps_the_key_mean():
    estimate = MeanEstimate.of_mean([2.0, 4.0], seed=0)
    written = estimate.model_dump(mode="json", exclude_unset=True)
    assert set(written) == {"mean", "ci_low", "ci_high", "n"}
    assert (written["mean"], written["n"]) == (3.0, 2)
    assert (written["ci_low"], written["ci_high"]) == estimate.bounds
    assert MeanEstimate.model_validate(written) == estimate
    # As a plain estimate (a comparison's table cell): value, not mean.
    assert estimate.plain().model_dump(exclude_unset=True) == {
        "value": 3.0, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high, "n": 2}


def test_a_subclass_writes_its_own_fields_beside_its_own_value_key():
    difference = PairedDifference(value=-0.25, ci_low=-0.5, ci_high=0.0, n=8,
                                  undefined_resamples=3, p=0.04, test="sign_flip")
    written = difference.model_dump(mode="json")
    assert written == {"diff": -0.25, "ci_low": -0.5, "ci_high": 0.0, "n": 8,
                       "undefined_resamples": 3, "p": 0.04, "test": "sign_flip"}
    assert PairedDifference.model_validate(written) == difference
    beta = Coefficient.wald(2.0, 0.5, 0.01, 1.02, 2.98)
    assert beta.model_dump(exclude_unset=True) == {"beta": 2.0, "ci_low": 1.02, "ci_high": 2.98,
                                                   "se": 0.5, "p": 0.01}


class _Scores(SideBySide):
    recall: Estimate | None = None
    f1: Estimate | None = None


def test_side_by_side_writes_the_values_by_name_and_the_bounds_together():
    scores = _Scores(n=3, recall=Estimate.with_bounds(0.5, (0.2, 0.8), 3),
                     f1=Estimate.with_bounds(0.4, (0.1, 0.6), 3))
    written = scores.model_dump(mode="json", exclude_unset=True)
    assert written == {"n": 3, "recall": 0.5, "f1": 0.4, "ci_low": {"recall": 0.2, "f1": 0.1},
                       "ci_high": {"recall": 0.8, "f1": 0.6}}
    read = _Scores.model_validate(written)
    assert read.recall == Estimate(value=0.5, ci_low=0.2, ci_high=0.8, n=3)
    assert read.f1.bounds == (0.1, 0.6)
    assert read.model_dump(mode="json", exclude_unset=True) == written
    # A metric the section does not score is not written at all.
    only = _Scores(n=2, recall=Estimate.with_bounds(1.0, (1.0, 1.0), 2))
    assert only.model_dump(mode="json") == {"n": 2, "recall": 1.0, "ci_low": {"recall": 1.0},
                                            "ci_high": {"recall": 1.0}}


class _Figures(Metrics):
    odds_ratio: float | None


def test_metrics_json_writes_a_float_json_cannot_hold_as_null():
    assert _Figures(odds_ratio=math.inf).to_json() == {"odds_ratio": None}
    assert _Figures(odds_ratio=math.nan).to_json() == {"odds_ratio": None}
    assert _Figures(odds_ratio=2.5).to_json() == {"odds_ratio": 2.5}
