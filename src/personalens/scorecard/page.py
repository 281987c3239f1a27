"""scorecard.html: a row per system, a column per headline grouped find / robust / ask / safe,
each cell linking to its lens run's report; the pairs that differ after correction; a chart."""

from personalens.report import HtmlReport, Link, panels_with_ci

SIGNIFICANT = 0.05  # adjusted p below which a pair is marked as differing
DIFFERS = "*"


def render(card: dict) -> str:
    report = HtmlReport(f"personalens · scorecard ({card['size']})")
    keys = list(card["metrics"])
    groups = {k.split(".", 1)[0]: card["metrics"][k]["group"] for k in keys}
    report.paragraph(
        f"Judge, simulated user and dataset generator: {card['judge']} (one fixed model for "
        f"every system). Population: {card['population']}. Lenses: "
        f"{', '.join(f'{group} = {lens}' for lens, group in groups.items())}. Each cell is "
        "the figure of that lens's own metrics.json with its 95 % CI, and links to the run's "
        "report.")
    differs = _differing(card)
    headers = ["system (model · retriever)",
               *(f"{card['metrics'][k]['group']}: {card['metrics'][k]['short']} "
                 f"{_arrow(card['metrics'][k])}" for k in keys)]
    rows = []
    for name, info in card["system_info"].items():
        judged = ", self-judged" if info["self_judged"] else ""
        row: list[object] = [f"{name} ({info['model']} · {info['retriever']}{judged})"]
        for key in keys:
            lens, metric = key.split(".", 1)
            run = card["runs"][name][lens]
            cell = card["systems"][name][lens].get(metric)
            mark = DIFFERS if (name, key) in differs else ""
            row.append(Link(_text(cell, run["status"]) + mark + _judge_mark(card, key, name),
                            run["report"]))
        rows.append(row)
    report.table(headers, rows)
    report.paragraph("Columns: " + "; ".join(
        f"{card['metrics'][k]['short']} = {card['metrics'][k]['label']} ({k})" for k in keys)
        + ".")
    report.paragraph(f"{DIFFERS} this system differs from another on this metric after "
                     f"{card['correction']} correction across the scorecard's "
                     f"{sum(len(m) for p in card['pairs'].values() for m in p.values())} paired "
                     f"tests (adjusted p < {SIGNIFICANT}). ↑ higher is better, ↓ lower is better.")
    _judge_legend(report, card, keys)
    _pair_table(report, card)
    _chart(report, card, keys)
    for note in card["notes"]:
        report.paragraph(note)
    return report.render()


def _text(cell: dict | None, status: str) -> str:
    if status not in ("complete",):
        shown = "" if cell is None or cell["value"] is None else _estimate(cell) + " "
        return f"{shown}[{status}]"
    return "–" if cell is None else _estimate(cell)


def _estimate(cell: dict) -> str:
    value, low, high = cell["value"], cell["ci_low"], cell["ci_high"]
    if value is None:
        return "undefined"
    ci = f" [{low + 0.0:.3g}, {high + 0.0:.3g}]" if low is not None and high is not None else ""
    return f"{value + 0.0:.3g}{ci}"  # + 0.0: -0.0 reads 0


def _differing(card: dict) -> set[tuple[str, str]]:
    out = set()
    for key, by_lens in card["pairs"].items():
        a, b = key.split("__vs__")
        for lens, by_metric in by_lens.items():
            for metric, entry in by_metric.items():
                if entry["p_adj"] is not None and entry["p_adj"] < SIGNIFICANT:
                    out |= {(a, f"{lens}.{metric}"), (b, f"{lens}.{metric}")}
    return out


def _pair_table(report: HtmlReport, card: dict) -> None:
    rows = []
    for key, by_lens in card["pairs"].items():
        a, b = key.split("__vs__")
        for lens, by_metric in by_lens.items():
            for metric, e in by_metric.items():
                label = card["metrics"][f"{lens}.{metric}"]["label"]
                noise = {True: "within judge noise", False: "beyond it"}.get(
                    e.get("within_judge_noise"), "–")
                rows.append([f"{a} - {b}", label, e["diff"], e["ci_low"], e["ci_high"], e["n"],
                             e["test"], e["p"], e["p_adj"], noise,
                             Link("comparison", card["comparisons"][lens])])
    if rows:
        report.heading("Paired differences")
        report.table(["pair", "metric", "difference", "CI low", "CI high", "shared units",
                      "test", "p", f"p ({card['correction']})", "judge noise",
                      "lens comparison"], rows)


JUDGE_MARKS = {"reliable": "", "doubtful": " ⚠", "unreliable": " ✗"}


def _judge_mark(card: dict, key: str, system: str) -> str:
    """A judged cell's judge verdict, when the card audited it."""
    lens, metric = key.split(".", 1)
    entry = card.get("judge_audit", {}).get(lens, {}).get(metric)
    if entry is None:
        return ""
    verdict = entry["systems"].get(system, {}).get("verdict")
    return JUDGE_MARKS.get(verdict, " (judge not audited)")


def _judge_legend(report: HtmlReport, card: dict, keys: list[str]) -> None:
    audit = card.get("judge_audit")
    if audit is None:
        judged = [k for k in keys if card["metrics"][k].get("judged")]
        if judged:
            report.paragraph(f"{', '.join(judged)} are scored by an LLM judge whose reliability "
                             "this card did not measure: rerun with --audit-judges.")
        return
    report.paragraph("Judged cells: ⚠ the judge is doubtful on this metric, ✗ unreliable "
                     "(personalens judge-audit; no mark: reliable). A pair marked 'within judge "
                     "noise' differs by no more than the judge's own answers moved when asked "
                     "again, reworded or reordered: it is not a difference between systems.")
    rows = [[f"{lens}.{metric}", entry["verdict"] or "not audited", ", ".join(entry["audited"]),
             *[Link(e.get("verdict") or e.get("note", "–"), e["audit"]) if e.get("audit")
               else e.get("note", "–") for e in entry["systems"].values()]]
            for lens, by_metric in audit.items() for metric, entry in by_metric.items()]
    systems = list(card["system_info"])
    report.heading("The judge's reliability")
    report.table(["metric", "verdict", "judged verdicts", *systems], rows)


def _chart(report: HtmlReport, card: dict, keys: list[str]) -> None:
    panels = {}
    for key in keys:
        lens, metric = key.split(".", 1)
        panels[f"{card['metrics'][key]['label']} {_arrow(card['metrics'][key])}"] = {
            name: _bar(card["systems"][name][lens].get(metric)) for name in card["systems"]}
    report.figure(panels_with_ci(panels), "Every headline per system with its 95 % CI "
                                          "(each panel on its metric's own scale)")


def _arrow(metric: dict) -> str:
    return "↑" if metric["higher_is_better"] else "↓"


def _bar(cell: dict | None) -> tuple[float | None, float | None, float | None]:
    if cell is None:
        return None, None, None
    return cell["value"], cell["ci_low"], cell["ci_high"]
