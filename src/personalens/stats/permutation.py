"""The paired sign-flip permutation test of a mean difference (condition vs base, per record).

Exact when every sign pattern fits in `resamples` (2^n <= resamples); otherwise Monte Carlo with
the +1 correction, p = (1 + #{|mean*| >= |mean|}) / (1 + resamples), which is never 0.
"""

import itertools

import numpy as np


def sign_flip_test(differences: np.ndarray, *, resamples: int = 10000, seed: int = 0) -> dict:
    """{mean, p, exact, n} for the two-sided test that the paired differences centre on 0."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    if n == 0:
        return {"mean": None, "p": None, "exact": False, "n": 0}
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)  # float noise must not split ties
    if 2 ** n <= resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        means = np.abs(signs @ d / n)
        return {"mean": float(d.mean()), "p": float(np.mean(means >= observed - tolerance)),
                "exact": True, "n": n}
    signs = np.random.default_rng(seed).choice((1.0, -1.0), size=(resamples, n))
    extreme = int(np.sum(np.abs(signs @ d / n) >= observed - tolerance))
    return {"mean": float(d.mean()), "p": (1 + extreme) / (1 + resamples), "exact": False,
            "n": n}
