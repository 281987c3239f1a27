"""Percentile bootstrap confidence intervals over independent units (questions, queries, pairs).

Both functions draw the same resamples for the same seed and number of units, so a mean's CI
is the same whichever of them computes it.
"""

from collections.abc import Callable

import numpy as np


def bootstrap_ci(units: np.ndarray, statistic: Callable[[np.ndarray], float | None],
                 *, resamples: int = 1000, level: float = 0.95,
                 seed: int = 0) -> tuple[float | None, float | None]:
    """(low, high) of `statistic` over `resamples` resamples of the rows of `units`.

    Resamples where the statistic is undefined (None) are skipped; (None, None) if all are.
    """
    rng = np.random.default_rng(seed)
    n = len(units)
    if n == 0:
        return None, None
    values = [statistic(units[rng.integers(0, n, n)]) for _ in range(resamples)]
    values = np.array([v for v in values if v is not None], dtype=float)
    if values.size == 0:
        return None, None
    return _percentiles(values, level)


def mean_ci(values: np.ndarray, *, resamples: int = 1000, level: float = 0.95,
            seed: int = 0) -> tuple[float | None, float | None]:
    """(low, high) of the mean of `values`, vectorised: one (resamples, n) draw."""
    n = len(values)
    if n == 0:
        return None, None
    rows = np.random.default_rng(seed).integers(0, n, (resamples, n))
    return _percentiles(np.asarray(values, dtype=float)[rows].mean(axis=1), level)


def mean_with_ci(values: np.ndarray, *, seed: int = 0) -> dict:
    """{value, ci_low, ci_high, n}: a mean and its 95 % bootstrap CI (None when empty)."""
    low, high = mean_ci(values, seed=seed)
    return {"value": float(np.mean(values)) if len(values) else None, "ci_low": low,
            "ci_high": high, "n": int(len(values))}


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))
