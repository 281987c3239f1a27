"""Agreement between judges scoring the same units: weighted kappa for two, Krippendorff's
alpha (ordinal) for more. Units a judge could not score are missing, not guessed.

The judge audit's two-rater figures (exact agreement, weighted kappa, Krippendorff's alpha,
Gwet's AC2) and their bootstrap CIs on shared resamples follow `judge_agreement`."""

from collections.abc import Sequence
from typing import Literal

import numpy as np

from personalens.stats.bootstrap import _CHUNK_VALUES, _percentiles
from personalens.stats.estimate import Estimate

SCALE = (1, 5)  # the rubric scale: kappa's quadratic weights count steps on it


def judge_agreement(ratings: np.ndarray) -> dict:
    """`ratings`: (judges, units), NaN where a judge gave no valid score.

    Two judges: quadratic-weighted Cohen's kappa (scikit-learn) over the units both scored.
    More, or any score off the integer scale (release scoring uses a 4.5 as it is): Krippendorff's
    ordinal alpha (the `krippendorff` package), which handles missing values and ranks whatever
    values occur; kappa's categories are the scale's integers, and truncating 4.5 to 4 would
    count a disagreement as agreement.
    """
    ratings = np.asarray(ratings, dtype=float)
    judges = ratings.shape[0]
    if judges < 2:
        raise ValueError("agreement needs at least two judges")
    both = ~np.isnan(ratings).any(axis=0)  # kappa's units: scored by both judges
    if judges == 2 and np.array_equal(ratings[:, both], np.round(ratings[:, both])):
        from sklearn.metrics import cohen_kappa_score
        a, b = ratings[0, both], ratings[1, both]
        if both.sum() < 2 or (len(set(a)) == 1 and len(set(b)) == 1 and a[0] == b[0]):
            value = None  # one value everywhere: chance agreement is total, kappa undefined
        else:
            a, b = a.astype(int), b.astype(int)
            # Every level of the scale, seen or not: 2 -> 5 is three steps even when no judge
            # gave a 3 or a 4 (by default scikit-learn weighs only the labels that occur).
            labels = list(range(min(SCALE[0], a.min(), b.min()),
                                max(SCALE[1], a.max(), b.max()) + 1))
            value = float(cohen_kappa_score(a, b, labels=labels, weights="quadratic"))
        return {"method": "weighted_kappa", "value": value, "n": int(both.sum())}
    import krippendorff
    scored = (~np.isnan(ratings)).sum(axis=0) >= 2
    try:
        value = float(krippendorff.alpha(reliability_data=ratings[:, scored],
                                         level_of_measurement="ordinal"))
    except (ValueError, ZeroDivisionError):
        value = None
    return {"method": "krippendorff_alpha", "value": value, "n": int(scored.sum())}


# --- Two raters on the same units (the judge audit) ---------------------------------------------
#
# A judge against itself re-asked, two judges, a judge against a person. Ratings are float arrays
# with NaN where a rater gave no rating; only the units both rated count in any figure.

_Weights = Literal["identity", "linear", "quadratic"]
_Level = Literal["ordinal", "nominal", "interval"]

_WEIGHTS = ("identity", "linear", "quadratic")
_LEVELS = ("ordinal", "nominal", "interval")
_LEVEL = 0.95  # the bootstrap CIs' coverage


def paired_units(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ratings of the units both raters rated (a NaN in either drops the unit).

    `a` and `b` are one rating per unit, aligned: the same length, unit i at position i.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"two aligned 1-d rating arrays expected, got shapes {a.shape} and "
                         f"{b.shape}")
    both = ~(np.isnan(a) | np.isnan(b))
    return a[both], b[both]


def exact_agreement(a: np.ndarray, b: np.ndarray) -> float | None:
    """The share of the units both rated where the two ratings are equal; None when none."""
    a, b = paired_units(a, b)
    return float(np.mean(a == b)) if a.size else None


def agreement_weights(q: int, weights: _Weights) -> np.ndarray:
    """The q x q agreement weights w[k, l] of categories k and l (indices on the scale).

    identity: 1 on the diagonal, 0 elsewhere; linear: 1 - |k - l| / (q - 1); quadratic:
    1 - (k - l)^2 / (q - 1)^2. Used by both weighted kappa and Gwet's AC2.
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}, got {weights!r}")
    if q < 1:
        raise ValueError(f"at least one category needed, got q={q}")
    if q == 1:
        return np.ones((1, 1))  # one category: every pair agrees (and q - 1 = 0 divides nothing)
    steps = np.abs(np.subtract.outer(np.arange(q), np.arange(q))) / (q - 1)
    if weights == "identity":
        return (steps == 0).astype(float)
    return 1.0 - (steps if weights == "linear" else steps ** 2)


def cohen_kappa(a: np.ndarray, b: np.ndarray, categories: Sequence[float], *,
                weights: _Weights = "quadratic") -> float | None:
    """Weighted Cohen's kappa over the units both rated; None when undefined.

    From the contingency table p[k, l] over every category in `categories` (seen or not: 2 -> 5
    is three steps even when nobody gave a 3 or a 4): p_o = sum w p, p_e = sum w[k, l] p[k, +]
    p[+, l], kappa = (p_o - p_e) / (1 - p_e). Undefined with fewer than 2 units or when chance
    agreement is total (1 - p_e == 0, e.g. both raters gave one and the same value throughout).
    """
    w = agreement_weights(len(categories), weights)
    x, y = _category_indices(a, b, categories)
    if x.size < 2:
        return None
    return _defined(_kappa_rows(_tables(x[None], y[None], len(categories)), w)[0])


def gwet_ac2(a: np.ndarray, b: np.ndarray, categories: Sequence[float], *,
             weights: _Weights = "quadratic") -> float | None:
    """Gwet's AC2 for two raters over the units both rated (AC1 with identity weights).

    Gwet, Handbook of Inter-Rater Reliability (4th ed.): p_a = sum w p over the contingency
    table; pi_k = (p[k, +] + p[+, k]) / 2; p_e = T_w / (q (q - 1)) * sum pi_k (1 - pi_k), with
    T_w the sum of all q x q weights; AC2 = (p_a - p_e) / (1 - p_e). Unlike kappa's, this chance
    agreement is 0 when every rating is one value, so total agreement there is 1.0. None with no
    unit, fewer than 2 categories (q - 1 = 0) or 1 - p_e == 0.
    """
    q = len(categories)
    w = agreement_weights(q, weights)
    x, y = _category_indices(a, b, categories)
    if x.size == 0 or q < 2:
        return None
    return _defined(_ac2_rows(_tables(x[None], y[None], q), w)[0])


def krippendorff_alpha(a: np.ndarray, b: np.ndarray, *,
                       level: _Level = "ordinal") -> float | None:
    """Krippendorff's alpha of the two raters over the units both rated (`krippendorff` package).

    None when undefined: fewer than 2 units, a single value throughout (no variation to agree
    on), or the package raises or returns nan. The values present are the domain: unseen ones
    change nothing at any level (the ordinal distance counts the values between two ranks, and
    an unseen value counts 0).
    """
    import krippendorff  # as `judge_agreement`: loaded only when asked for

    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}, got {level!r}")
    a, b = paired_units(a, b)
    if a.size < 2:
        return None
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(krippendorff.alpha(reliability_data=np.vstack([a, b]),
                                             level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None  # the package's way of saying there is a single value in the domain
    return value if np.isfinite(value) else None


def agreement_figures(a: np.ndarray, b: np.ndarray, categories: Sequence[float], *,
                      level: _Level = "ordinal", weights: _Weights = "quadratic",
                      resamples: int = 1000, seed: int = 0) -> dict[str, Estimate]:
    """{exact, alpha, ac2, kappa}: the four figures, each an `Estimate` with its 95 % CI.

    `value` is the statistic over every unit both rated, `n` their number. The CIs are
    percentile bootstrap intervals over those units, and every statistic is computed on the
    very same resamples (the draw `default_rng(seed).integers(0, n, (resamples, n))`), so the
    four intervals describe one and the same uncertainty. A resample where a statistic is
    undefined is skipped for that statistic; its CI is None when all are, or when n == 0.
    """
    q = len(categories)
    w = agreement_weights(q, weights)
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}, got {level!r}")
    x, y = _category_indices(a, b, categories)  # raises on a value off the categories
    pa, pb = paired_units(a, b)
    n = int(pa.size)
    values = {"exact": exact_agreement(pa, pb), "alpha": krippendorff_alpha(pa, pb, level=level),
              "ac2": gwet_ac2(pa, pb, categories, weights=weights),
              "kappa": cohen_kappa(pa, pb, categories, weights=weights)}
    samples = {name: np.full(resamples, np.nan) for name in values}
    if n:
        rng = np.random.default_rng(seed)
        # Blocks of rows of the one (resamples, n) draw, as `bootstrap.mean_cis` makes them
        # (bit-identical to drawing it whole), so memory stays bounded for a few thousand units.
        chunk = max(1, _CHUNK_VALUES // n)
        for start in range(0, resamples, chunk):
            rows = rng.integers(0, n, (min(chunk, resamples - start), n))
            block = slice(start, start + len(rows))
            tables = _tables(x[rows], y[rows], q)
            samples["exact"][block] = np.trace(tables, axis1=1, axis2=2)  # x == y on the diagonal
            if q >= 2:
                samples["ac2"][block] = _ac2_rows(tables, w)
            if n >= 2:
                samples["kappa"][block] = _kappa_rows(tables, w)
                # The package takes one table at a time: about 0.4 s per 1000 resamples of 500
                # units, so no need to vectorise alpha as well.
                samples["alpha"][block] = [_nan_if_none(krippendorff_alpha(pa[r], pb[r],
                                                                           level=level))
                                           for r in rows]
    figures = {}
    for name, value in values.items():
        defined = samples[name][~np.isnan(samples[name])]
        low, high = _percentiles(defined, _LEVEL) if defined.size else (None, None)
        figures[name] = Estimate(value=value, ci_low=low, ci_high=high, n=n)
    return figures


def _category_indices(a: np.ndarray, b: np.ndarray,
                      categories: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The paired units' ratings as indices into `categories`; ValueError naming a stray value.

    Every rating given is checked, paired or not: a value off the scale is a broken rating
    wherever it sits, not something to drop silently with its unit.
    """
    cats = np.asarray(categories, dtype=float)
    if cats.ndim != 1 or cats.size == 0 or np.isnan(cats).any():
        raise ValueError(f"categories must be a non-empty list of values, got {categories!r}")
    if np.unique(cats).size != cats.size:
        raise ValueError(f"categories must be distinct, got {categories!r}")
    order = np.argsort(cats)
    for ratings in (np.asarray(a, dtype=float), np.asarray(b, dtype=float)):
        given = ratings[~np.isnan(ratings)]
        at = np.minimum(np.searchsorted(cats[order], given), cats.size - 1)
        stray = given[cats[order][at] != given]
        if stray.size:
            raise ValueError(f"rating {stray[0]:g} is not one of the categories {list(categories)}")
    pa, pb = paired_units(a, b)
    sorted_cats = cats[order]
    return (order[np.searchsorted(sorted_cats, pa)].astype(np.intp),
            order[np.searchsorted(sorted_cats, pb)].astype(np.intp))


def _tables(x: np.ndarray, y: np.ndarray, q: int) -> np.ndarray:
    """(rows, q, q) contingency tables in proportions: row r counts the pairs (x[r, i], y[r, i])."""
    rows, n = x.shape
    cells = (np.arange(rows)[:, None] * q + x) * q + y
    return np.bincount(cells.ravel(), minlength=rows * q * q).reshape(rows, q, q) / n


def _kappa_rows(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted kappa of each table; nan where 1 - p_e == 0."""
    p_o = np.einsum("kl,rkl->r", w, tables)
    p_e = np.einsum("kl,rk,rl->r", w, tables.sum(axis=2), tables.sum(axis=1))
    return _chance_corrected(p_o, p_e)


def _ac2_rows(tables: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Gwet's AC2 of each table (q >= 2); nan where 1 - p_e == 0."""
    q = w.shape[0]
    p_a = np.einsum("kl,rkl->r", w, tables)
    pi = (tables.sum(axis=2) + tables.sum(axis=1)) / 2
    p_e = w.sum() / (q * (q - 1)) * (pi * (1 - pi)).sum(axis=1)
    return _chance_corrected(p_a, p_e)


def _chance_corrected(p_o: np.ndarray, p_e: np.ndarray) -> np.ndarray:
    # An exact test: 1 - p_e is exactly 0 only when both margins sit on one category (a sum of
    # 1.0 * 1.0 * w and zeros); anything else is a genuine, if small, denominator.
    spare = 1.0 - p_e
    out = np.full(p_o.shape, np.nan)
    np.divide(p_o - p_e, spare, out=out, where=spare != 0)
    return out


def _defined(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _nan_if_none(value: float | None) -> float:
    return np.nan if value is None else value
