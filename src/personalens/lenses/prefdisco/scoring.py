"""PrefAlign, NormAlign and the questions-vs-gain fit: pure functions on numbers.

PrefAlign (strict) is sum_j w_j * g_j over the criteria with a valid verdict, the weights
renormalised to sum to 1 over those; None when no criterion is valid. The release's formula,
sum w*s / sum w over every criterion with its raw weight, is `prefalign_release`.

NormAlign = 100 * (PA_discovery - PA_baseline) / (PA_oracle - PA_baseline) on paired means;
undefined when |PA_oracle - PA_baseline| is below `min_gap` on the 1-5 scale (default 0.05):
a gap of 0.01 would scale a 0.3 discovery gain to 3,000. An oracle below the baseline gives a
defined value whose sign no longer says whether discovery helped; it is flagged.
"""

import math

import numpy as np
from scipy import stats

from personalens.lenses.prefdisco.metrics import LinearFit, NormAlign
from personalens.lenses.prefdisco.options import NORMALIGN_MIN_GAP as MIN_GAP
from personalens.stats.bootstrap import bootstrap_ci_counted


def prefalign_strict(scored: list[tuple[float | None, float]]) -> float | None:
    """(score or None, normalised weight) per criterion -> PrefAlign on the 1-5 scale."""
    valid = [(s, w) for s, w in scored if s is not None]
    total = sum(w for _, w in valid)
    return sum(s * w for s, w in valid) / total if valid and total > 0 else None


def prefalign_release(scored: list[tuple[float, float]]) -> float:
    """The release's sum w*s / sum w with the weights as given (0 when they sum to 0)."""
    total = sum(w for _, w in scored)
    return sum(s * w for s, w in scored) / total if total > 0 else 0.0


def normalign_value(baseline: float, discovery: float, oracle: float,
                    min_gap: float = MIN_GAP) -> float | None:
    gap = oracle - baseline
    return None if gap == 0 or abs(gap) < min_gap else 100.0 * (discovery - baseline) / gap


def normalign_of_rows(rows: np.ndarray, min_gap: float = MIN_GAP) -> float | None:
    """NormAlign of paired rows (baseline, discovery, oracle PrefAlign per instance): of their
    means."""
    return normalign_value(*np.asarray(rows, dtype=float).mean(axis=0), min_gap)


def normalign(rows: np.ndarray, *, min_gap: float = MIN_GAP, seed: int = 0) -> NormAlign:
    """NormAlign with a paired bootstrap CI; `rows` is (instances, 3): baseline, discovery,
    oracle PrefAlign of the same instances. `undefined_resamples` counts the bootstrap
    resamples whose NormAlign was undefined (left out of the CI)."""
    rows = np.asarray(rows, dtype=float).reshape(-1, 3)
    if len(rows) == 0:
        return NormAlign(value=None, ci_low=None, ci_high=None, undefined=True, n=0,
                         discovery_gain=None, oracle_gain=None, oracle_below_baseline=False,
                         undefined_resamples=0)
    baseline, discovery, oracle = rows.mean(axis=0)
    value = normalign_value(baseline, discovery, oracle, min_gap)
    low, high, skipped = bootstrap_ci_counted(
        rows, lambda r: normalign_of_rows(r, min_gap), seed=seed)
    return NormAlign(value=value, ci_low=low, ci_high=high, undefined=value is None,
                     n=len(rows), discovery_gain=float(discovery - baseline),
                     oracle_gain=float(oracle - baseline),
                     oracle_below_baseline=bool(value is not None and oracle < baseline),
                     undefined_resamples=skipped)


def count_questions(asked: list[str]) -> int:
    """Individual questions: the question marks in the asked text."""
    return sum(text.count("?") for text in asked)


def linear_fit(x: list[float], y: list[float]) -> LinearFit:
    """Pearson r with its p-value and the least-squares line of y on x; all None but n with
    fewer than 3 pairs or a constant side."""
    n = len(x)
    if n < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return LinearFit(r=None, p=None, slope=None, intercept=None, n=n)
    fit = stats.linregress(x, y)
    p = float(fit.pvalue)
    return LinearFit(r=float(fit.rvalue), p=None if math.isnan(p) else p,
                     slope=float(fit.slope), intercept=float(fit.intercept), n=n)
