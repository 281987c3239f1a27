"""PRISK preference narrowing: set-level coverage metrics for one record, and the exclusion test.

For one (persona, query) record under one condition, U is the query's universal answer set (the
canonical items an LLM extracted from many personas' answers), A ⊆ U the items judged useful for
this persona, and C_s ⊆ U the items the s-th of K sampled answers covers. `coverage_metrics`
gives CR, UIR, RelCR (per response, as the release, and three more ways), HMC, Jaccard and SIR
as the release defines them, with C the union over the samples, and the per-sample means of CR
and UIR. The personalised and the base samples may differ in number (the paper: 20 and 50).

`exclusion_table` is the paper's attribute-conditioned exclusion analysis: per query, for every
item, attribute and group, is the item excluded (useful to the user, A, and not covered, C:
A ∖ C) more often for the group's records than for the other records of that query? Fisher's
exact test per cell, then Benjamini-Hochberg within each query (the paper's), or one
correction over every cell of every query (Holm or BH). The groups are the paper's: gender,
age bands, economic status low / middle / high and health healthy / unwell, the free text of a
profile mapped to them by `economic_group` and `health_group`.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from personalens.lenses.prisk.options import ExclusionCorrection
from personalens.stats.exact_tests import Alternative, group_gap
from personalens.stats.multiple_testing import Method, adjust

# The exclusion analysis' correction: Benjamini-Hochberg within each query (the paper's), or
# Holm / BH over every cell of the report.
CORRECTED_BY: dict[str, Method] = {"query-bh": "bh", "report-holm": "holm", "report-bh": "bh"}

# The paper sets its youngest band (22 and under) apart; the release's other bands follow.
AGE_GROUPS = ("<=22", "23-39", "40-59", "60+")
_AGE_EDGES = (23, 40, 60)  # lower bounds of the 2nd..4th groups; a group is [lower, next)
GROUPED = ("gender", "age", "economic_status", "health_status")


def _ratio(numerator: float, denominator: float) -> float | None:
    # A zero denominator means the metric is undefined for this record; 0 or 1 would bias means.
    return numerator / denominator if denominator else None


def coverage_metrics(samples: list[set[str]], base_samples: list[set[str]], universe: set[str],
                     useful: set[str]) -> dict:
    """{cr_union, cr_per_sample, uir, uir_per_sample, relcr, relcr_single, relcr_mean,
    relcr_union, hmc, jaccard, sir} for one record.

    C is the union of the samples' items (C_s the s-th sample's), as the paper's CR and UIR
    both use it: cr_union = |C|/|U|; uir = |C ∩ A|/|A|. The per-sample means, ours:
    cr_per_sample = mean_s |C_s|/|U|, uir_per_sample = mean_s |C_s ∩ A|/|A|.

    RelCR compares with the base samples B_b (as many as the base had, not necessarily as many
    as `samples`), B their union. relcr is the release's (`narrowing_analysis_50x100.py`'s
    RelCR_union): each response's own coverage against the base's union, |C_s|/|B|, averaged
    over the record's responses as the release averages over responses. The others:
    relcr_mean = mean_s |C_s| / mean_b |B_b| (which is also the release's RelCR_mean averaged
    over responses), relcr_single = |C_1|/|B_1| (one sample each, the release's noisy first
    version) and relcr_union = |C|/|B| (union against union, which grows with the number of
    samples on each side). hmc = |A \\ C| (useful items no sample mentions);
    jaccard = |C ∩ A|/|C ∪ A|; sir = |C ∩ (U \\ A)|/|C| (share of the covered items that are
    not useful). A ratio whose denominator is zero (no samples, empty U, A, B or C) is None.
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
        "relcr": (None if not sizes or not base_union else
                  sum(_ratio(size, len(base_union)) for size in sizes) / len(sizes)),
        "relcr_single": _ratio(sizes[0], base_sizes[0]) if sizes and base_sizes else None,
        "relcr_mean": None if mean is None or base_mean is None else _ratio(mean, base_mean),
        "relcr_union": _ratio(len(union), len(base_union)),
        "hmc": len(useful - union),
        "jaccard": _ratio(hits, len(union | useful)),
        "sir": _ratio(len(union & (universe - useful)), len(union)),
    }


def attribute_groups(persona: dict) -> dict[str, str | None]:
    """The persona's group on each tested attribute (the paper's: gender, age, economic and
    health status): gender as normalised lower-case text, age one of AGE_GROUPS, economic
    status one of ECONOMIC_GROUPS and health one of HEALTH_GROUPS (or OTHER for text the
    mapping cannot place); None when missing or (age) unparseable."""
    group_of = {"age": age_group, "economic_status": economic_group,
                "health_status": health_group}
    return {name: group_of.get(name, _normal)(persona.get(name)) for name in GROUPED}


def _normal(value: object) -> str | None:
    text = " ".join(str(value or "").split()).lower()
    return text or None


# The paper's groups for the builder's free text. A word list per group, matched as whole words
# in lower case; OTHER when no list matches. Negated words ("no chronic conditions", "not
# wealthy", "debt-free": a clause from no / not / never / without / free of up to the next
# comma, "but" or "and", and "X-free") are set apart first: a negated word of one health group
# counts for the other, a negated economic word for nothing.
ECONOMIC_GROUPS = ("low", "middle", "high")
HEALTH_GROUPS = ("healthy", "unwell")
OTHER = "other"
_ECONOMIC = (  # checked in this order: hardship first (as the release), "upper middle" middle
    ("low", r"poor|poverty|broke|low[- ]income|lower[- ]income|low[- ]wage|low[- ]paid|"
            r"unemployed|jobless|struggl\w*|tight|debts?|paycheck[- ]to[- ]paycheck|precarious|"
            r"hardship|unstable|insecure|strained|getting by|modest|working[- ]class|"
            r"limited (?:income|means|budget)"),
    ("high", r"high[- ]income|high[- ]earn\w*|high[- ]pa(?:id|ying)|well[- ]pa(?:id|ying)|"
             r"wealthy|rich|affluent|well[- ]off|well[- ]to[- ]do|upper[- ]class|prosperous|"
             r"six[- ]figures?|financially independent"),
    ("middle", r"middle|stable|comfortable|secure|steady|average|moderate|decent"),
)
_UNWELL = (r"unwell|ill|illness\w*|sick\w*|disease\w*|chronic|conditions?|disorders?|pain\w*|"
           r"injur\w*|disab\w*|diabet\w*|asthma\w*|arthritis|cancer|hypertension|"
           r"blood pressure|heart|migraines?|obes\w*|recovering|surgery|poor|fair|impair\w*|"
           r"mobility|insomnia|fatigue|problems?|issues?")
_HEALTHY = r"healthy|good|great|excellent|fit|fine|well|active|strong|robust|athletic"
_NEGATED = re.compile(r"\b(?:no|not|never|without|free (?:of|from))\b.*?"
                      r"(?=[,;.]|\bbut\b|\band\b|$)")


def _split_negated(value: object) -> tuple[str, str] | None:
    """(the text outside negated clauses, the negated clauses), lower case; None if empty."""
    text = _normal(value)
    if text is None:
        return None
    text = re.sub(r"\b(\w+)[- ]free\b", r"no \1", text)
    return _NEGATED.sub(" , ", text), " ".join(m.group(0) for m in _NEGATED.finditer(text))


def _says(words: str, text: str) -> bool:
    return re.search(rf"\b(?:{words})\b", text) is not None


def economic_group(value: object) -> str | None:
    """"low", "middle" or "high" for an economic status in free text ("Struggling" → low,
    "Stable" → middle, "Wealthy" → high; hardship words first, so "high income but deep in
    debt" is low; "upper middle class" is middle), OTHER when no word list matches, None when
    missing."""
    parts = _split_negated(value)
    if parts is None:
        return None
    return next((group for group, words in _ECONOMIC if _says(words, parts[0])), OTHER)


def health_group(value: object) -> str | None:
    """"healthy" or "unwell" for a physical health status in free text: any sign of illness,
    pain, injury, a condition or a fair / poor rating makes it unwell ("Good, but chronic back
    pain" → unwell), else a healthy word makes it healthy ("Healthy, no chronic conditions" →
    healthy); OTHER when neither list matches, None when missing."""
    parts = _split_negated(value)
    if parts is None:
        return None
    positive, negated = parts
    if _says(_UNWELL, positive) or _says(_HEALTHY, negated):
        return "unwell"
    if _says(_HEALTHY, positive) or _says(_UNWELL, negated):
        return "healthy"
    return OTHER


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
                    correction: ExclusionCorrection = "query-bh") -> dict:
    """{query: {item: {attribute: {group: {rate_in, rate_out, gap, odds_ratio, p, p_adj, n_in,
    n_out}}}}}.

    Per query (an item label means one thing within its query's U only): every record of the
    query whose group on the attribute is known takes part; "in" is the group's records, "out"
    the query's other records; the rate is the share excluded (A ∖ C). A cell with an empty
    side keeps p None. p_adj by `correction`: query-bh (the paper's) is Benjamini-Hochberg
    within each query (its items x attributes x groups are one family); report-holm and
    report-bh correct over every cell of every query at once.
    """
    by_query: dict[str, list[ExclusionRow]] = {}
    for row in rows:
        by_query.setdefault(row.query_id, []).append(row)
    table: dict = {}
    families: dict[str | None, list[dict]] = {}  # None: the whole report
    for query, group_rows in sorted(by_query.items()):
        cells = families.setdefault(query if correction == "query-bh" else None, [])
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
    for cells in families.values():
        for cell, p_adj in zip(cells, adjust([c["p"] for c in cells], CORRECTED_BY[correction]),
                               strict=True):
            cell["p_adj"] = p_adj
    return table
