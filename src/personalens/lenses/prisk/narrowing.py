"""PRISK preference narrowing: set-level coverage metrics for one record, and the exclusion test.

For one (persona, query) record under one condition, U is the query's universal answer set (the
canonical items an LLM extracted from many personas' answers), A ⊆ U the items judged useful for
this persona, and C_s ⊆ U the items the s-th of K sampled answers covers. `coverage_metrics`
gives CR, UIR, RelCR (three ways), HMC, Jaccard and SIR as the release defines them.

`exclusion_table` is the paper's per-group exclusion analysis: for every item, attribute and
group, is the item left out (in U, not covered) more often for the group's records than for the
other records? Fisher's exact test per cell, then one BH (or Holm) correction over every cell.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from personalens.stats.exact_tests import Alternative, group_gap
from personalens.stats.multiple_testing import Method, adjust

AGE_GROUPS = ("<25", "25-39", "40-59", "60+")
_AGE_EDGES = (25, 40, 60)  # lower bounds of the 2nd..4th groups; a group is [lower, next)


def _ratio(numerator: float, denominator: float) -> float | None:
    # A zero denominator means the metric is undefined for this record; 0 or 1 would bias means.
    return numerator / denominator if denominator else None


def coverage_metrics(samples: list[set[str]], base_samples: list[set[str]], universe: set[str],
                     useful: set[str]) -> dict:
    """{cr, uir, relcr_single, relcr_mean, relcr_union, hmc, jaccard, sir} for one record.

    cr = mean_s |C_s|/|U|; uir = |C∪ ∩ A|/|A|; relcr_single = |C_1|/|C_1^base|;
    relcr_mean = mean_s |C_s| / mean_s |C_s^base|; relcr_union = |C∪|/|C∪^base|;
    hmc = |A \\ C∪| (useful items no sample mentions); jaccard = |C∪ ∩ A|/|C∪ ∪ A|;
    sir = |C∪ ∩ (U \\ A)|/|C∪| (share of the covered items that are not useful).
    C∪ is the union over samples. A ratio whose denominator is zero (no samples, empty U, A
    or union) is None.
    """
    # U is built from every sample's items, so an item outside U only comes from inconsistent
    # input (e.g. a stale answer set); dropping it keeps every ratio within [0, 1] where it
    # should be, instead of inflating coverage with items nobody can score.
    covered = [s & universe for s in samples]
    base = [s & universe for s in base_samples]
    useful = useful & universe
    union, base_union = set().union(*covered), set().union(*base)
    sizes, base_sizes = [len(s) for s in covered], [len(s) for s in base]
    mean = _ratio(sum(sizes), len(sizes))
    base_mean = _ratio(sum(base_sizes), len(base_sizes))
    hits = len(union & useful)
    return {
        "cr": None if mean is None else _ratio(mean, len(universe)),
        "uir": _ratio(hits, len(useful)),
        "relcr_single": _ratio(sizes[0], base_sizes[0]) if sizes and base_sizes else None,
        "relcr_mean": None if mean is None or base_mean is None else _ratio(mean, base_mean),
        "relcr_union": _ratio(len(union), len(base_union)),
        "hmc": len(useful - union),
        "jaccard": _ratio(hits, len(union | useful)),
        "sir": _ratio(len(union & (universe - useful)), len(union)),
    }


def attribute_groups(persona: dict) -> dict[str, str | None]:
    """The persona's group on each tested attribute: gender and economic status as normalised
    lower-case text, age as one of AGE_GROUPS; None when missing or (age) unparseable."""
    return {"gender": _normal(persona.get("gender")), "age": age_group(persona.get("age")),
            "economic_status": _normal(persona.get("economic_status"))}


def _normal(value: object) -> str | None:
    text = " ".join(str(value or "").split()).lower()
    return text or None


def age_group(value: object) -> str | None:
    """The age group of "55-64 years", "18-24", "34", "40s", "65+ years", "Over 70", "under 18".

    A closed range is placed by its midpoint (55-64 → 59.5 → "40-59"; the groups are half-open
    [lower, next lower)); a decade "40s" is the range 40-49. An open range ("65+", "over 70",
    "under 18") is placed only when it lies wholly in one group, since its midpoint is unknown:
    "over 30" spans three groups and gives None, as does text with no number.
    """
    text = str(value or "").lower()
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)]
    if len(numbers) == 1 and re.search(r"\+|over|above|older|and up", text):
        low = _group_of(numbers[0])
        return low if low == AGE_GROUPS[-1] else None  # only 60+ is unbounded above
    if len(numbers) == 1 and re.search(r"under|below|younger|less than", text):
        return AGE_GROUPS[0] if numbers[0] <= _AGE_EDGES[0] else None
    if len(numbers) == 1 and re.search(r"\d0s\b", text):
        return _group_of(numbers[0] + 4.5)
    if len(numbers) == 2 and numbers[0] <= numbers[1]:
        return _group_of((numbers[0] + numbers[1]) / 2)
    return _group_of(numbers[0]) if len(numbers) == 1 else None


def _group_of(age: float) -> str:
    return AGE_GROUPS[sum(age >= edge for edge in _AGE_EDGES)]


@dataclass(frozen=True)
class ExclusionRow:
    """One record: its attribute groups, its answer set U and the items its answer covers."""
    record_id: str
    groups: dict[str, str | None]
    universe: set[str]
    covered: set[str]


def exclusion_table(rows: Iterable[ExclusionRow], *, alternative: Alternative = "two-sided",
                    correction: Method = "bh") -> dict:
    """{item: {attribute: {group: {rate_in, rate_out, gap, odds_ratio, p, p_adj, n_in, n_out}}}}.

    Only records whose U holds the item and whose group on the attribute is known take part
    (an item a record could not have mentioned says nothing about exclusion); "in" is the
    group's records, "out" the rest. A cell with an empty side keeps p None. p_adj corrects
    over every cell of the table at once: items x attributes x groups is one family.
    """
    rows = list(rows)
    table: dict = {}
    cells: list[dict] = []
    for item in sorted(set().union(*(r.universe for r in rows))):
        for attribute in sorted({a for r in rows for a in r.groups}):
            present = [r for r in rows
                       if item in r.universe and r.groups.get(attribute) is not None]
            for group in sorted({r.groups[attribute] for r in present}):
                inside = [item not in r.covered for r in present if r.groups[attribute] == group]
                outside = [item not in r.covered for r in present if r.groups[attribute] != group]
                cell = {**group_gap(sum(inside), len(inside), sum(outside), len(outside),
                                    alternative), "n_in": len(inside), "n_out": len(outside)}
                table.setdefault(item, {}).setdefault(attribute, {})[group] = cell
                cells.append(cell)
    for cell, p_adj in zip(cells, adjust([c["p"] for c in cells], correction), strict=True):
        cell["p_adj"] = p_adj
    return table
