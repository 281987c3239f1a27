"""comparison.json's tables drawn as report.html: the lens's tables, the paired comparisons
with a forest plot, and the units where two systems differ most, side by side as text."""

import heapq
from itertools import combinations

from personalens.compare.paired_tests import Pair, differing_units
from personalens.compare.run_inputs import RunSet
from personalens.lenses.commands import Headline, Table
from personalens.report import BrowserEntry, HtmlReport, forest_plot
from personalens.stats.estimate import Estimate

SHOWN_PER_PAIR = 20  # units in the browser for each pair of systems


def estimate_cell(cell: object) -> object:
    """A table cell: an estimate as "value [low, high]"."""
    if not isinstance(cell, Estimate):
        return cell
    if cell.value is None:
        return None
    bounds = ci_text(*cell.bounds)
    return f"{cell.value:.3f}" + (f" {bounds}" if bounds else "")


def ci_text(low: float | None, high: float | None) -> str | None:
    return None if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def render(title: str, result: dict, runs: RunSet, headlines: dict[str, dict[str, Headline]],
           tables: list[Table], pairs: list[Pair]) -> str:
    report = HtmlReport(title)
    report.table(["system", "run", "status"],
                 [[name, run["run"], run["status"]] for name, run in result["runs"].items()])
    if result["shared_items"] is not None:
        report.paragraph(f"Every figure covers only the {result['shared_items']} items all "
                         "runs share (--shared-items).")
    if any(not s.complete for s in runs.systems):
        report.paragraph("[incomplete] marks a run that did not finish or has failed items: "
                         "its figures cover only the items it scored.")
    for table in tables:
        report.heading(table.title)
        report.table(table.headers, [[estimate_cell(c) for c in row] for row in table.rows])
    for png, caption in runs.comparison.figures(tables):
        report.figure(png, caption)
    _pairs(report, pairs, result["correction"])
    report.browser(_entries(runs, headlines), ["pair"],
                   heading="Units where two systems differ most")
    return report.render()


def _pairs(report: HtmlReport, pairs: list[Pair], correction: str) -> None:
    report.heading(f"Paired differences (a - b), p adjusted by {correction} over "
                   f"all {len(pairs)}")
    report.table(["a", "b", "headline", "n", "diff", "95 % CI", "test", "p", "p adjusted"],
                 [[p.a_label, p.b_label, p.label, p.n, p.value, ci_text(*p.bounds), p.test,
                   p.p, p.p_adj] for p in pairs])
    if pairs:
        report.figure(forest_plot([(f"{p.a} - {p.b}: {p.label}", p.value, *p.bounds)
                                   for p in pairs],
                                  "paired difference (a - b)", "Paired differences, 95 % CI"),
                      "Each pair's difference on its shared units with its paired bootstrap CI")


def _entries(runs: RunSet, headlines: dict[str, dict[str, Headline]]) -> list[BrowserEntry]:
    entries = []
    texts = {s.name: runs.comparison.unit_text(s.records) for s in runs.systems}
    for a, b in combinations(runs.systems, 2):
        both = {key: (h, headlines[b.name][key]) for key, h in headlines[a.name].items()
                if key in headlines[b.name] and h.statistic is None}
        gaps: dict[str, float] = {}
        for first, second in both.values():
            for unit, gap in differing_units(first, second).items():
                gaps[unit] = gaps.get(unit, 0.0) + gap
        shown = heapq.nlargest(SHOWN_PER_PAIR, (u for u in gaps if gaps[u] > 0
                                                and u in texts[a.name] and u in texts[b.name]),
                               key=lambda u: (gaps[u], u))
        for unit in shown:
            scores = "\n".join(f"{h.label}: {h.units[unit]:.3f} vs {other.units[unit]:.3f}"
                               for h, other in both.values()
                               if unit in h.units and unit in other.units)
            entries.append(BrowserEntry(texts[a.name][unit][0],
                                        {"pair": f"{a.label} vs {b.label}"},
                                        [(a.label, texts[a.name][unit][1]),
                                         (b.label, texts[b.name][unit][1]),
                                         ("scores (a vs b)", scores)]))
    return entries
