"""The PQB sections of report.html: flip rate against K, clean vs typo hits, MRR, and a browser
of every item's pair of users with their queries and rankings."""

import heapq
from collections.abc import Iterable

from personalens.lenses.pqb.analysis import KS, pairs
from personalens.lenses.pqb.metrics import PqbMetrics
from personalens.population.typo_habits import KINDS
from personalens.report import (
    ENTRY_LIMIT,
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    grouped_bars,
    line_plot,
)

SHOWN = 10  # ranking ids kept per query for the browser
FACETS = ["flip@1", "flip@10", "typo hurt"]


def report_sections(report: HtmlReport, metrics: PqbMetrics, retriever: str) -> None:
    report.heading("Flip rate")
    rows = [[name, k, v.value, v.ci_low, v.ci_high]
            for name, by_k in metrics.flip_rate.items() for k, v in by_k.items()]
    report.table(["definition", "K", "flip rate", "95% CI low", "95% CI high"], rows)
    report.figure(line_plot({f"{retriever} ({name})":
                             [(k, metrics.flip_rate[name][str(k)].value) for k in KS]
                             for name in ("paper", "all_pairs")}, "K", "flip rate",
                            "Flip rate vs K"),
                  "Flip rate against K: paper (pairs with at least one hit) and all pairs")
    hit = metrics.hit
    report.heading("Clean vs typo queries")
    report.paragraph(f"All {metrics.n_queries} clean queries, and the {metrics.n_typo} that "
                     "have a typo version: on those, clean and typo hits are paired (the same "
                     "queries), so their difference is the drop.")
    report.table(["K", "hit clean (all)", "hit clean (typo subset)", "hit typo",
                  "drop (paired)", "drop CI low", "drop CI high"],
                 [[k, hit["clean"][str(k)].value, hit["clean_on_typo"][str(k)].value,
                   hit["typo"][str(k)].value, hit["drop"][str(k)].value,
                   hit["drop"][str(k)].ci_low, hit["drop"][str(k)].ci_high] for k in KS])
    kinds = ("clean_on_typo", "typo", "random_typo") if metrics.n_random_typo else (
        "clean_on_typo", "typo")
    report.figure(grouped_bars({q: {f"Hit@{k}": hit[q][str(k)].value for k in KS}
                                for q in kinds}, "hit rate", "Clean vs typo"),
                  "Hit@K for clean, personal-typo and (built data) random-typo queries")
    if metrics.n_random_typo:
        _random_typo_table(report, metrics)
    report.table(["queries", "MRR@20", "CI low", "CI high", "n"],
                 [[q, v.value, v.ci_low, v.ci_high, v.n] for q, v in metrics.mrr.items()])
    edits = metrics.typo_edit_kinds
    report.heading("Typo edits by kind")
    report.table(["kind", "personal typo queries", "random typo queries"],
                 [[kind, edits["typo"].get(kind, 0), edits["random_typo"].get(kind, 0)]
                  for kind in KINDS])


def _random_typo_table(report: HtmlReport, metrics: PqbMetrics) -> None:
    report.heading("Personal vs random typos")
    report.paragraph(f"{metrics.n_random_typo} queries have both a personal typo version and "
                     "a random one with as many edited words. Negative personal − random means "
                     "the users' own typos hurt retrieval more than random ones.")
    hit = metrics.hit
    report.table(["K", "hit random typo", "drop (random)", "personal − random", "CI low",
                  "CI high"],
                 [[k, hit["random_typo"][str(k)].value, hit["random_drop"][str(k)].value,
                   hit["personal_minus_random"][str(k)].value,
                   hit["personal_minus_random"][str(k)].ci_low,
                   hit["personal_minus_random"][str(k)].ci_high] for k in KS])


def browser_entries(records: Iterable[dict]) -> BrowserItems:
    """One entry per pair of users asking for the same item: flips first.

    The pairs are ranked from each record's key, item and clean rank alone; a second pass over
    the records keeps only the shown pairs' records, so a large run never holds them all.
    """
    ranks = [{f: r[f] for f in ("key", "parent_asin", "rank_clean")}
             for r in records if r["status"] == "ok"]
    ranked = pairs(ranks)
    shown = heapq.nsmallest(ENTRY_LIMIT, ranked, key=lambda p: (
        _flips(*p, 1) != "flips", f"item {p[0]['parent_asin']}"))
    wanted = {r["key"] for pair in shown for r in pair}
    full = {r["key"]: r for r in records if r["key"] in wanted}
    return BrowserItems([_pair_entry(full[a["key"]], full[b["key"]]) for a, b in shown],
                        FACETS, total=len(ranked))


def _hit(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def _flips(a: dict, b: dict, k: int) -> str:
    return "flips" if _hit(a["rank_clean"], k) != _hit(b["rank_clean"], k) else "same"


def _pair_entry(a: dict, b: dict) -> BrowserEntry:
    hurt = any(r["typo_query"] is not None and _hit(r["rank_clean"], 10)
               and not _hit(r["rank_typo"], 10) for r in (a, b))
    fields = []
    for record in (a, b):
        for kind, label in (("clean", "query"), ("typo", "typo query"),
                            ("random_typo", "random-typo query")):
            text = record["syntax_query"] if kind == "clean" else record[f"{kind}_query"]
            if text is None:
                continue
            top = record.get(f"top_{kind}") or []
            fields.append((f"{record['uid']} · {label} (rank {record[f'rank_{kind}'] or '>20'})",
                           f"{text}\ntop {len(top)}: {', '.join(top)}"))
    return BrowserEntry(title=f"item {a['parent_asin']}", fields=fields, facets={
        "flip@1": _flips(a, b, 1), "flip@10": _flips(a, b, 10),
        "typo hurt": "yes (hit@10 lost)" if hurt else "no"})
