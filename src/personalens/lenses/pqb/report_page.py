"""report.html for a PQB run: flip rate against K, clean vs typo hits, MRR."""

from personalens.lenses.pqb.analysis import KS
from personalens.population.typo_habits import KINDS
from personalens.report import HtmlReport, grouped_bars, line_plot


def build_report(metrics: dict, manifest: dict) -> str:
    report = HtmlReport("personalens · PersonalQuery-Benchmark evaluation")
    config = manifest["config"]
    report.paragraph(f"Queries: {config['queries']} · corpus: {config['meta']} · retriever: "
                     f"{config['retriever']} · {metrics['n_queries']} queries, "
                     f"{metrics['n_pairs']} user pairs, {metrics['n_typo']} typo queries")
    report.heading("Flip rate")
    rows = [[name, k, v["value"], v["ci_low"], v["ci_high"]]
            for name, by_k in metrics["flip_rate"].items() for k, v in by_k.items()]
    report.table(["definition", "K", "flip rate", "95% CI low", "95% CI high"], rows)
    report.figure(line_plot({f"{config['retriever']} ({name})":
                             [(k, metrics["flip_rate"][name][str(k)]["value"]) for k in KS]
                             for name in ("paper", "all_pairs")}, "K", "flip rate",
                            "Flip rate vs K"),
                  "Flip rate against K: paper (pairs with at least one hit) and all pairs")
    report.heading("Clean vs typo queries")
    report.paragraph(f"All {metrics['n_queries']} clean queries, and the "
                     f"{metrics['n_typo']} that have a typo version: on those, clean and typo "
                     "hits are paired (the same queries), so their difference is the drop.")
    report.table(["K", "hit clean (all)", "hit clean (typo subset)", "hit typo",
                  "drop (paired)", "drop CI low", "drop CI high"],
                 [[k, metrics["hit"]["clean"][str(k)]["value"],
                   metrics["hit"]["clean_on_typo"][str(k)]["value"],
                   metrics["hit"]["typo"][str(k)]["value"],
                   metrics["hit"]["drop"][str(k)]["value"],
                   metrics["hit"]["drop"][str(k)]["ci_low"],
                   metrics["hit"]["drop"][str(k)]["ci_high"]] for k in KS])
    kinds = ("clean_on_typo", "typo", "random_typo") if metrics["n_random_typo"] else (
        "clean_on_typo", "typo")
    report.figure(grouped_bars({q: {f"Hit@{k}": metrics["hit"][q][str(k)]["value"] for k in KS}
                                for q in kinds}, "hit rate", "Clean vs typo"),
                  "Hit@K for clean, personal-typo and (built data) random-typo queries")
    if metrics["n_random_typo"]:
        _random_typo_table(report, metrics)
    report.table(["queries", "MRR@20", "CI low", "CI high", "n"],
                 [[q, v["value"], v["ci_low"], v["ci_high"], v["n"]]
                  for q, v in metrics["mrr"].items()])
    kinds = metrics["typo_edit_kinds"]
    report.heading("Typo edits by kind")
    report.table(["kind", "personal typo queries", "random typo queries"],
                 [[kind, kinds["typo"].get(kind, 0), kinds["random_typo"].get(kind, 0)]
                  for kind in KINDS])
    if metrics["failures"]:
        report.heading("Failed query records (rerun the same command to retry)")
        report.table(["key", "error"], [[f["key"], f.get("error")] for f in metrics["failures"]])
    return report.render()


def _random_typo_table(report: HtmlReport, metrics: dict) -> None:
    report.heading("Personal vs random typos")
    report.paragraph(f"{metrics['n_random_typo']} queries have both a personal typo version and "
                     "a random one with as many edited words. Negative personal − random means "
                     "the users' own typos hurt retrieval more than random ones.")
    hit = metrics["hit"]
    report.table(["K", "hit random typo", "drop (random)", "personal − random", "CI low",
                  "CI high"],
                 [[k, hit["random_typo"][str(k)]["value"], hit["random_drop"][str(k)]["value"],
                   hit["personal_minus_random"][str(k)]["value"],
                   hit["personal_minus_random"][str(k)]["ci_low"],
                   hit["personal_minus_random"][str(k)]["ci_high"]] for k in KS])
