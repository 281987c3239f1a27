"""The `pqb build` sections of report.html: what was kept at each stage, and why the rest was
not."""

from personalens.lenses.pqb.options import BuildOptions
from personalens.population.typo_habits import KINDS
from personalens.report import HtmlReport, grouped_bars


def report_sections(report: HtmlReport, metrics, options: BuildOptions) -> None:
    summary = metrics.to_json()
    report.heading("Funnel")
    report.table(["stage", "count"], [
        ["users with a writing history", summary["users"]],
        [f"users with >= {options.min_sentences} sentences (profiled)",
         summary["profiled_users"]],
        ["products in the corpus", summary["products"]],
        ["items with >= 2 profiled users" if options.pair_users == "owners"
         else "items (any two profiled users may form a pair)", summary["items"]],
        ["candidate queries written", summary["candidates"]],
        ["candidates keeping the 5-core-term constraint", summary["candidates_valid"]],
        [f"candidates in the coherent set (cosine >= {options.similarity})",
         summary["candidates_kept"]],
        ["queries selected (2 per item)", summary["queries"]],
        ["queries with a personal typo version", summary["typo_queries"]],
        ["queries with a random typo version", summary["random_typo_queries"]],
    ])
    report.table(["item status", "items"], sorted(summary["items_by_status"].items()))
    if summary["skipped_by_reason"]:
        report.table(["skipped because", "items"], sorted(summary["skipped_by_reason"].items()))
    for key, label in (("typo_skipped_by_reason", "no personal typo version because"),
                       ("random_skipped_by_reason", "no random-typo version because")):
        if summary[key]:
            report.table([label, "queries"], sorted(summary[key].items()))
    rates = summary["typo_rates"]
    if not rates:
        return
    report.heading("Learned typo rates (edits per word of >= 3 letters)")
    report.table(["user", *KINDS], [[uid, *(r.get(k, 0.0) for k in KINDS)]
                                    for uid, r in rates.items()])
    report.figure(grouped_bars({uid: {k: r.get(k, 0.0) for k in KINDS}
                                for uid, r in list(rates.items())[:8]},
                               "edits per word", "Typo habits"),
                  "Learned per-kind typo rates (first 8 users)")
    recovery = summary.get("typo_recovery")
    if recovery and recovery["mean_absolute_error"] is not None:
        report.paragraph(f"Against the generator's known habits ({recovery['users']} users): "
                         f"mean absolute error {recovery['mean_absolute_error']:.4f} per kind.")
