"""Corrections across many tests (models x risks, items x attributes x groups): Holm's
step-down family-wise control and Benjamini-Hochberg's false discovery rate, via statsmodels."""

from typing import Literal

import numpy as np

Method = Literal["holm", "bh"]
_STATSMODELS = {"holm": "holm", "bh": "fdr_bh"}


def adjust(p_values: list[float | None], method: Method = "bh") -> list[float | None]:
    """Adjusted p-values in the input order; None (an untestable cell) stays None and does not
    count towards the number of tests."""
    from statsmodels.stats.multitest import multipletests

    present = [i for i, p in enumerate(p_values) if p is not None and not np.isnan(p)]
    out: list[float | None] = [None] * len(p_values)
    if not present:
        return out
    _, adjusted, _, _ = multipletests([p_values[i] for i in present], method=_STATSMODELS[method])
    for i, value in zip(present, adjusted, strict=True):
        out[i] = float(value)
    return out
