"""Paired comparisons between every two systems, for every headline both have: the difference
on their shared units, its 95 % paired bootstrap CI, the paired test, and p adjusted across
every comparison of the report."""

from itertools import combinations

import numpy as np

from personalens.compare.run_inputs import System
from personalens.lenses.commands import Headline
from personalens.stats.multiple_testing import Method, adjust
from personalens.stats.paired import paired_difference


def compare_pairs(systems: list[System], headlines: dict[str, dict[str, Headline]], *,
                  correction: Method = "holm", seed: int = 0) -> list[dict]:
    """One entry per (pair of systems, headline): {a, b, headline, label, n, diff, ci_low,
    ci_high, undefined_resamples, p, p_adj, test}; diff is a minus b."""
    out = []
    for a, b in combinations(systems, 2):
        for key, first in headlines[a.name].items():
            second = headlines[b.name].get(key)
            if second is None:
                continue
            shared = [u for u in first.units if u in second.units]
            result = ({"diff": None, "ci_low": None, "ci_high": None, "undefined_resamples": 0,
                       "p": None, "test": None, "n": 0} if not shared else paired_difference(
                np.array([first.units[u] for u in shared], dtype=float),
                np.array([second.units[u] for u in shared], dtype=float),
                first.statistic, binary=first.binary, seed=seed))
            out.append({"a": a.name, "b": b.name, "headline": key, "label": first.label,
                        **result})
    for entry, p_adj in zip(out, adjust([e["p"] for e in out], correction), strict=True):
        entry["p_adj"] = p_adj
    return out


def differing_units(a: Headline, b: Headline) -> dict[str, float]:
    """Unit -> |a - b| for a mean headline's shared units (a statistic's rows are not
    comparable one by one)."""
    if a.statistic is not None:
        return {}
    return {u: abs(float(a.units[u]) - float(b.units[u])) for u in a.units if u in b.units}
