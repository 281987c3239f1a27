"""Paired comparisons between every two systems, for every headline both have: the difference
on their shared units, its 95 % paired bootstrap CI, the paired test, and p adjusted across
every comparison of the report."""

from itertools import combinations

import numpy as np

from personalens.compare.run_inputs import System
from personalens.lenses.commands import Headline
from personalens.stats.multiple_testing import Method, adjust
from personalens.stats.paired import PairedDifference, paired_difference


class Pair(PairedDifference):
    """One comparison: the headline's `PairedDifference` a minus b on their shared units, the
    systems (and their labels, an incomplete run's marked) and p adjusted across the report."""

    a: str
    b: str
    headline: str
    label: str
    p_adj: float | None = None
    a_label: str = ""
    b_label: str = ""


def compare_pairs(systems: list[System], headlines: dict[str, dict[str, Headline]], *,
                  correction: Method = "holm", seed: int = 0) -> list[Pair]:
    """One `Pair` per (pair of systems, headline both have)."""
    out = []
    for a, b in combinations(systems, 2):
        for key, first in headlines[a.name].items():
            second = headlines[b.name].get(key)
            if second is None:
                continue
            shared = [u for u in first.units if u in second.units]
            result = PairedDifference(value=None, n=0) if not shared else paired_difference(
                np.array([first.units[u] for u in shared], dtype=float),
                np.array([second.units[u] for u in shared], dtype=float),
                first.statistic, binary=first.binary, seed=seed)
            out.append(Pair(a=a.name, b=b.name, headline=key, label=first.label,
                            **dict(result), a_label=a.label, b_label=b.label))
    for entry, p_adj in zip(out, adjust([e.p for e in out], correction), strict=True):
        entry.p_adj = p_adj
    return out


def differing_units(a: Headline, b: Headline) -> dict[str, float]:
    """Unit -> |a - b| for a mean headline's shared units (a statistic's rows are not
    comparable one by one)."""
    if a.statistic is not None:
        return {}
    return {u: abs(float(a.units[u]) - float(b.units[u])) for u in a.units if u in b.units}
