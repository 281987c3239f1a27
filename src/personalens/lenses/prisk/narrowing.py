"""PRISK preference narrowing: set-level coverage metrics for one record, and the exclusion test.

For one (persona, query) record under one condition, U is the query's universal answer set (the
canonical items an LLM extracted from many personas' answers), A ⊆ U the items judged useful for
this persona, and C_s ⊆ U the items the s-th of K sampled answers covers. `coverage_metrics`
gives CR, UIR, RelCR (three ways), HMC, Jaccard and SIR as the release defines them, with C the
union over the samples, and the per-sample means of CR and UIR.

`exclusion_table` is the paper's attribute-conditioned exclusion analysis: per query, for every
item, attribute and group, is the item excluded (useful to the user, A, and not covered, C:
A ∖ C) more often for the group's records than for the other records of that query? Fisher's
exact test per cell, then one correction (Holm or BH) over every cell of every query.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from personalens.stats.exact_tests import Alternative, group_gap
from personalens.stats.multiple_testing import Method, adjust

# The paper sets its youngest band (22 and under) apart; the release's other bands follow.
AGE_GROUPS = ("<=22", "23-39", "40-59", "60+")
_AGE_EDGES = (23, 40, 60)  # lower bounds of the 2nd..4th groups; a group is [lower, next)
GROUPED = ("gender", "age", "economic_status", "health_status")


def _ratio(numerator: float, denominator: float) -> float | None:
    # A zero denominator means the metric is undefined for this record; 0 or 1 would bias means.
    return numerator / denominator if denominator else None


def coverage_metrics(samples: list[set[str]], base_samples: list[set[str]], universe: set[str],
                     useful: set[str]) -> dict:
    """{cr_union, cr_per_sample, uir, uir_per_sample, relcr_single, relcr_mean, relcr_union,
    hmc, jaccard, sir} for one record.

    C is the union of the samples' items (C_s the s-th sample's), as the paper's CR and UIR
    both use it: cr_union = |C|/|U|; uir = |C ∩ A|/|A|. The per-sample means, ours:
    cr_per_sample = mean_s |C_s|/|U|, uir_per_sample = mean_s |C_s ∩ A|/|A|.
    relcr_single = |C_1|/|C_1^base|; relcr_mean = mean_s |C_s| / mean_s |C_s^base|;
    relcr_union = |C|/|C^base| (the paper's RelCR); hmc = |A \\ C| (useful items no sample
    mentions); jaccard = |C ∩ A|/|C ∪ A|; sir = |C ∩ (U \\ A)|/|C| (share of the covered items
    that are not useful). A ratio whose denominator is zero (no samples, empty U, A or C) is
    None.
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
    useful_hits = [len(s & useful) for s in covered]
    return {
        "cr_union": _ratio(len(union), len(universe)) if covered else None,
        "cr_per_sample": None if mean is None else _ratio(mean, len(universe)),
        "uir": _ratio(hits, len(useful)),
        "uir_per_sample": (None if not covered else
                           _ratio(sum(useful_hits) / len(covered), len(useful))),
        "relcr_single": _ratio(sizes[0], base_sizes[0]) if sizes and base_sizes else None,
        "relcr_mean": None if mean is None or base_mean is None else _ratio(mean, base_mean),
        "relcr_union": _ratio(len(union), len(base_union)),
        "hmc": len(useful - union),
        "jaccard": _ratio(hits, len(union | useful)),
        "sir": _ratio(len(union & (universe - useful)), len(union)),
    }


def attribute_groups(persona: dict) -> dict[str, str | None]:
    """The persona's group on each tested attribute (the paper's: gender, age, economic and
    health status): text as normalised lower-case text, age as one of AGE_GROUPS; None when
    missing or (age) unparseable."""
    return {name: age_group(persona.get(name)) if name == "age" else _normal(persona.get(name))
            for name in GROUPED}


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
    """One record: its query, attribute groups, answer set U, useful set A, and the items its
    answer covers (C)."""
    record_id: str
    query_id: str
    groups: dict[str, str | None]
    universe: set[str]
    useful: set[str]
    covered: set[str]

    def excluded(self, item: str) -> bool:
        """The paper's exclusion: useful to this user and not covered (A ∖ C)."""
        return item in self.useful and item not in self.covered


def exclusion_table(rows: Iterable[ExclusionRow], *, alternative: Alternative = "two-sided",
                    correction: Method = "holm") -> dict:
    """{query: {item: {attribute: {group: {rate_in, rate_out, gap, odds_ratio, p, p_adj, n_in,
    n_out}}}}}.

    Per query (an item label means one thing within its query's U only): every record of the
    query whose group on the attribute is known takes part; "in" is the group's records, "out"
    the query's other records; the rate is the share excluded (A ∖ C). A cell with an empty
    side keeps p None. p_adj corrects over every cell of every query at once: queries x items x
    attributes x groups is one family.
    """
    by_query: dict[str, list[ExclusionRow]] = {}
    for row in rows:
        by_query.setdefault(row.query_id, []).append(row)
    table: dict = {}
    cells: list[dict] = []
    for query, group_rows in sorted(by_query.items()):
        for item in sorted(set().union(*(r.universe for r in group_rows))):
            for attribute in sorted({a for r in group_rows for a in r.groups}):
                present = [r for r in group_rows
                           if item in r.universe and r.groups.get(attribute) is not None]
                for group in sorted({r.groups[attribute] for r in present}):
                    inside = [r.excluded(item) for r in present if r.groups[attribute] == group]
                    outside = [r.excluded(item) for r in present
                               if r.groups[attribute] != group]
                    cell = {**group_gap(sum(inside), len(inside), sum(outside), len(outside),
                                        alternative), "n_in": len(inside), "n_out": len(outside)}
                    table.setdefault(query, {}).setdefault(item, {}).setdefault(
                        attribute, {})[group] = cell
                    cells.append(cell)
    for cell, p_adj in zip(cells, adjust([c["p"] for c in cells], correction), strict=True):
        cell["p_adj"] = p_adj
    return table
