"""The PersonaBench section of report.html: every metric as a table, recall plots."""

from personalens.lenses.personabench.analysis import CATEGORIES
from personalens.report import HtmlReport, grouped_bars, line_plot

_ROWS = (*CATEGORIES, "overall")


def build_report(metrics: dict, manifest: dict) -> str:
    report = HtmlReport("personalens · PersonaBench evaluation")
    config = manifest["config"]
    report.paragraph(
        f"Data: {config['data']} · model: {config['model'] or 'none (retrieval only)'} · "
        f"k = {config['k']} · items: {metrics['n_recorded']} of {metrics['n_planned']} recorded, "
        f"{metrics['n_failed']} failed · status: "
        f"{'complete' if metrics['complete'] else 'INCOMPLETE'}"
    )
    conditions = metrics["conditions"]
    _retrieval_section(report, conditions)
    if any("end_to_end" in c for c in conditions):
        _end_to_end_section(report, conditions, metrics.get("noise_robustness", {}))
    _failures_section(report, metrics["failures"])
    report.heading("Where these numbers come from")
    report.paragraph("Every number above is a mean over records.jsonl in this run directory "
                     "(one line per question and condition); manifest.json holds the command, "
                     "configuration, package versions, dataset hash and token usage.")
    return report.render()


def _label(c: dict) -> str:
    return f"{c['retriever']} @ noise {c['noise']:g}"


def _retrieval_section(report: HtmlReport, conditions: list[dict]) -> None:
    report.heading("Retrieval")
    rows = [[_label(c), name, c["retrieval"][name]["recall"], c["retrieval"][name]["ndcg"],
             c["retrieval"][name]["n"]] for c in conditions for name in _ROWS]
    report.table(["condition", "category", "recall", "nDCG", "n"], rows)
    report.figure(
        grouped_bars({_label(c): {n: c["retrieval"][n]["recall"] for n in _ROWS}
                      for c in conditions}, "recall", "Retrieval recall per category"),
        "Retrieval recall per category per retriever and noise level",
    )
    noises = {c["noise"] for c in conditions}
    if len(noises) > 1:
        series: dict[str, list] = {}
        for c in sorted(conditions, key=lambda c: c["noise"]):
            series.setdefault(c["retriever"], []).append(
                (c["noise"], c["retrieval"]["overall"]["recall"]))
        report.figure(line_plot(series, "noise ratio", "overall recall", "Recall vs noise"),
                      "Overall retrieval recall against the noise ratio")


def _end_to_end_section(report: HtmlReport, conditions: list[dict],
                        robustness: dict[str, float]) -> None:
    report.heading("End to end (answers)")
    rows = [[_label(c), name, c["end_to_end"][name]["recall"],
             c["end_to_end"][name]["precision"], c["end_to_end"][name]["f1"],
             c["end_to_end"][name]["n"]] for c in conditions for name in _ROWS]
    report.table(["condition", "category", "recall", "precision", "F1", "n"], rows)
    report.heading("Information updating", level=3)
    report.table(["condition", "outdated-word recall", "score (1 − recall)", "n"],
                 [[_label(c), c["info_updating"]["outdated_recall"], c["info_updating"]["score"],
                   c["info_updating"]["n"]] for c in conditions])
    if robustness:
        report.heading("Noise robustness", level=3)
        report.table(["retriever", "1 − (F1 at lowest noise − F1 at highest)"],
                     sorted(robustness.items()))


def _failures_section(report: HtmlReport, failures: list[dict]) -> None:
    report.heading("Failures")
    if not failures:
        report.paragraph("No item failed.")
        return
    report.paragraph(f"{len(failures)} item(s) failed after retries; they are excluded from the "
                     "answer means above and will be retried when the same command is rerun.")
    report.table(["item", "kind", "attempts", "message"],
                 [[f["key"], f["kind"], f["attempts"], f["message"][:300]] for f in failures])
