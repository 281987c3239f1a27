"""Percentile bootstrap confidence intervals over independent units (questions, queries, pairs).

All of them draw the same resamples for the same seed and number of units, so a mean's
CI is the same whichever of them computes it.
"""

from collections.abc import Callable, Sequence

import numpy as np

_CHUNK_VALUES = 1 << 21  # indices per block of resamples: 2M (16 MB)


def bootstrap_ci(units: np.ndarray, statistic: Callable[[np.ndarray], float | None],
                 *, resamples: int = 1000, level: float = 0.95,
                 seed: int = 0) -> tuple[float | None, float | None]:
    """(low, high) of `statistic` over `resamples` resamples of the rows of `units`.

    Resamples where the statistic is undefined (None) are skipped; (None, None) if all are.
    `bootstrap_ci_counted` also says how many were skipped.
    """
    low, high, _ = bootstrap_ci_counted(units, statistic, resamples=resamples, level=level,
                                        seed=seed)
    return low, high


def bootstrap_ci_counted(units: np.ndarray, statistic: Callable[[np.ndarray], float | None],
                         *, resamples: int = 1000, level: float = 0.95,
                         seed: int = 0) -> tuple[float | None, float | None, int]:
    """`bootstrap_ci`, and the number of resamples whose statistic was undefined (skipped)."""
    rng = np.random.default_rng(seed)
    n = len(units)
    if n == 0:
        return None, None, 0
    values = [statistic(units[rng.integers(0, n, n)]) for _ in range(resamples)]
    defined = np.array([v for v in values if v is not None], dtype=float)
    skipped = resamples - defined.size
    if defined.size == 0:
        return None, None, skipped
    return (*_percentiles(defined, level), skipped)


def mean_ci(values: np.ndarray, *, resamples: int = 1000, level: float = 0.95,
            seed: int = 0) -> tuple[float | None, float | None]:
    """(low, high) of the mean of `values`, vectorised: the (resamples, n) draw in row chunks."""
    return mean_cis([values], resamples=resamples, level=level, seed=seed)[0]


def mean_cis(columns: Sequence[np.ndarray], *, resamples: int = 1000, level: float = 0.95,
             seed: int = 0) -> list[tuple[float | None, float | None]]:
    """`mean_ci` of each column, the same numbers; columns of equal length share one draw.

    The draw is `default_rng(seed).integers(0, n, (resamples, n))`, made a block of rows at a
    time (numpy's bounded integers carry their half-used 32-bit word in the generator, so the
    blocks are the rows of the one big draw), and each block's means are taken row by row as
    the whole matrix's would be: bit-identical to indexing with the full matrix.
    """
    arrays = [np.asarray(c, dtype=float) for c in columns]
    out: list[tuple[float | None, float | None]] = [(None, None)] * len(arrays)
    by_length: dict[int, list[int]] = {}
    for i, values in enumerate(arrays):
        by_length.setdefault(len(values), []).append(i)
    for n, indices in by_length.items():
        if n == 0:
            continue
        rng = np.random.default_rng(seed)
        means = np.empty((len(indices), resamples))
        chunk = max(1, _CHUNK_VALUES // n)
        for start in range(0, resamples, chunk):
            rows = rng.integers(0, n, (min(chunk, resamples - start), n))
            for k, i in enumerate(indices):
                means[k, start:start + len(rows)] = arrays[i][rows].mean(axis=1)
        for k, i in enumerate(indices):
            out[i] = _percentiles(means[k], level)
    return out


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))
