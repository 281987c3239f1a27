"""The prisk sections of report.html: risk x condition means with CIs, the attribution model,
an interaction plot per risk, narrowing coverage, exclusion gaps, the k-sweep, and every
response in the browser with its scores, reasons and retrieved memories."""

from collections.abc import Iterable, Iterator

from personalens.lenses.prisk.analysis import NARROWING_KEYS, normalised_irp
from personalens.lenses.prisk.metrics import PriskMetrics
from personalens.lenses.prisk.score_table import CONDITIONS
from personalens.report import (
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    bars_with_ci,
    first_entries,
    grouped_bars,
    interaction_plot,
    line_plot,
)

FACETS = ["risk", "condition", "retrieved"]


def report_sections(report: HtmlReport, metrics: PriskMetrics) -> None:
    _means(report, metrics)
    _attribution(report, metrics)
    _narrowing(report, metrics)
    _sycophancy(report, metrics)
    _k_sweep(report, metrics)


def _means(report: HtmlReport, metrics: PriskMetrics) -> None:
    report.heading("Risk × condition")
    report.paragraph("Means over the records scored in every condition (paired), with 95 % "
                     "bootstrap CIs. IRP is the 1–5 judge score (5 = no irrelevant "
                     "personalisation); accuracy is rule-based (unparsed answers are wrong); "
                     "agreement and framing are 1–5 (5 = not sycophantic); narrowing is UIR.")
    report.table(["risk", "condition", "mean", "CI low", "CI high", "n"],
                 [[risk, c, v["value"], v["ci_low"], v["ci_high"], v["n"]]
                  for risk, by_condition in metrics.risk_means.items()
                  for c, v in by_condition.items()])
    for risk, by_condition in metrics.risk_means.items():
        report.figure(bars_with_ci({c: (v["value"], v["ci_low"], v["ci_high"])
                                    for c, v in by_condition.items()}, risk, risk),
                      f"{risk}: mean per condition with 95 % CI")
    if metrics.unpaired:
        report.paragraph("Left out of the means (not scored in every condition): " + "; ".join(
            f"{risk}: {', '.join(ids[:20])}" for risk, ids in metrics.unpaired.items() if ids))


def _attribution(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.lmm:
        return
    report.heading("Attribution: score ~ P × M + (1 | record)")
    report.paragraph("REML fit per risk; p adjusted across risks × effects; partial η² from "
                     "the repeated-measures ANOVA.")
    report.table(["risk", "effect", "β", "SE", "CI low", "CI high", "p", "p adj", "partial η²"],
                 [[risk, e, f[e]["beta"], f[e]["se"], f[e]["ci_low"], f[e]["ci_high"], f[e]["p"],
                   f[e]["p_adj"], f[e]["eta_p2"]]
                  for risk, f in metrics.lmm.items() for e in ("profile", "memory",
                                                                "interaction")])
    report.table(["risk", "record variance", "residual variance"],
                 [[risk, f["variance"]["record"], f["variance"]["residual"]]
                  for risk, f in metrics.lmm.items()])
    for risk, cells in metrics.cell_means.items():
        report.figure(interaction_plot({pm: cells[name]["mean"] for pm, name in CONDITIONS.items()},
                                       "mean score", risk), f"{risk}: the 2×2 cell means")


def _narrowing(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.narrowing:
        return
    report.heading("Narrowing")
    report.table(["condition", *NARROWING_KEYS, "n"],
                 [[c, *[v.get(k) for k in NARROWING_KEYS], v.get("n")]
                  for c, v in metrics.narrowing.items()])
    report.figure(grouped_bars({k: {c: v.get(k) for c, v in metrics.narrowing.items()}
                                for k in ("cr", "uir", "jaccard")}, "share", "coverage"),
                  "Coverage (CR), useful-item recall (UIR) and Jaccard per condition")
    gaps = [(f"{item} · {attr}={group}", cell) for item, attrs in metrics.exclusion.items()
            for attr, groups in attrs.items() for group, cell in groups.items()
            if cell.get("gap") is not None]
    if gaps:
        gaps.sort(key=lambda g: -abs(g[1]["gap"]))
        report.paragraph(f"Exclusion gaps under {metrics.exclusion_condition}: rate at which a "
                         "group's answers leave an item of U out, against everyone else's; "
                         "Fisher's exact test, Benjamini–Hochberg adjusted. * = p_adj < 0.05.")
        report.table(["item · group", "rate in", "rate out", "gap", "odds ratio", "p", "p adj"],
                     [[name, c["rate_in"], c["rate_out"], c["gap"], c["odds_ratio"], c["p"],
                       c["p_adj"]] for name, c in gaps[:40]])
        top = gaps[:15]
        report.figure(grouped_bars({"gap": {(("* " if (c["p_adj"] or 1) < 0.05 else "") + name)
                                            [:40]: abs(c["gap"]) for name, c in top}},
                                   "|exclusion gap|", "largest exclusion gaps"),
                      "Largest exclusion gaps (* significant after BH)")
    if metrics.narrowing_failures:
        report.paragraph("Narrowing verdicts that failed (records left out): " + "; ".join(
            f"{f['key']} ({f['kind']})" for f in metrics.narrowing_failures))


def _sycophancy(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not any(v.get("n_agreement") or v.get("n_framing") for v in metrics.sycophancy.values()):
        return
    report.heading("Sycophancy")
    report.table(["condition", "agreement rate (score ≤ 3)", "framing rate (score ≤ 2)",
                  "PIS"],
                 [[c, v["agreement_rate"], v["framing_rate"],
                   metrics.pis.get("by_condition", {}).get(c)]
                  for c, v in metrics.sycophancy.items()])
    if metrics.inversion:
        inv = metrics.inversion
        report.paragraph(f"Preference inversion (profile condition): {inv.get('n', 0)} decided "
                         f"pairs, flip rate {inv.get('flip_rate')}; {inv.get('n_undecided', 0)} "
                         f"without a lean, {inv.get('not_invertible', 0)} not invertible.")


def _k_sweep(report: HtmlReport, metrics: PriskMetrics) -> None:
    if not metrics.k_sweep:
        return
    report.heading("Retrieval depth (forced retrieval, memory only)")
    report.table(["k", "IRP", "n", "accuracy", "n"],
                 [[k, v["irp"], v["n_irp"], v["accuracy"], v["n_accuracy"]]
                  for k, v in metrics.k_sweep.items()])
    points = {risk: [(float(k), v[risk]) for k, v in metrics.k_sweep.items()]
              for risk in ("irp", "accuracy")}
    report.figure(line_plot({"IRP (normalised)": [(k, normalised_irp(v))
                                                  for k, v in points["irp"]],
                             "accuracy": points["accuracy"]}, "k", "score", "k-sweep"),
                  "IRP (normalised to 0–1) and accuracy against retrieval depth k")


def browser_entries(records: Iterable[dict]) -> BrowserItems:
    """Every response of every condition, in record order."""
    return first_entries(enumerate(_entries(records)), FACETS)


def _entries(records: Iterable[dict]) -> Iterator[BrowserEntry]:
    for record in records:
        if record["status"] != "ok":
            continue
        for condition, answer in record["conditions"].items():
            fields = [("query", record["question"]), ("answer", answer["answer"])]
            if answer.get("draft"):
                fields.insert(1, ("draft (before reflection)", answer["draft"]))
            verdict = answer.get("verdict")
            if verdict:
                fields.append(("judge", f"score {verdict['score']}: {verdict['justification']}"))
            if "parsed" in answer:
                fields.append(("rule-based check", f"parsed {answer['parsed']!r}, correct "
                                                   f"{answer['correct']}"))
            if "pis" in answer:
                fields.append(("PIS", str(answer["pis"])))
            for memory in answer.get("memories", []):
                fields.append((f"memory {memory['focal_attribute']} (score "
                               f"{memory['score']:.3f}{', decoy' if memory['decoy'] else ''})",
                               memory["text"]))
            for s, sample in enumerate(answer.get("samples", [])):
                fields.append((f"sample {s} topics", ", ".join(sample["topics"])))
            yield BrowserEntry(
                title=f"{record['record_id']} · {condition} · {record['question'][:80]}",
                facets={"risk": record["risk"], "condition": condition,
                        "retrieved": str(answer.get("retrieved", False)).lower()},
                fields=fields)
