"""Percentile bootstrap confidence intervals over independent units (queries, pairs)."""

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
    tail = (1.0 - level) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))
