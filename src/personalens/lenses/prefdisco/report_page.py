"""The prefdisco sections of report.html: per-task table, NormAlign bars with CIs, PrefAlign and
accuracy per condition, questions vs gain, data notes, and every transcript in the browser."""

from collections.abc import Iterable

from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.report import (
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    bars_with_ci,
    first_entries,
    grouped_bars,
    scatter,
)

FACETS = ["condition", "task", "correct", "judge"]


def report_sections(report: HtmlReport, metrics: PrefdiscoMetrics, records: list[dict]) -> None:
    conditions = metrics.conditions
    report.heading("PrefAlign and accuracy per condition")
    report.paragraph(f"Means over the {metrics.n_instances} instance(s) scored in every "
                     "condition (paired), with 95 % bootstrap CIs. PrefAlign is on the 1–5 "
                     f"scale (scoring: {metrics.scoring}).")
    report.table(["condition", "PrefAlign", "CI low", "CI high", "accuracy", "CI low",
                  "CI high", "unparsed answers", "n"],
                 [[c, metrics.prefalign[c].mean, metrics.prefalign[c].ci_low,
                   metrics.prefalign[c].ci_high, metrics.accuracy[c].mean,
                   metrics.accuracy[c].ci_low, metrics.accuracy[c].ci_high,
                   metrics.accuracy[c].n_unparsed, metrics.prefalign[c].n] for c in conditions])
    report.heading("Per task")
    report.table(["task", "n", *[f"PrefAlign {c}" for c in conditions],
                  *[f"accuracy {c}" for c in conditions],
                  "NormAlign" if metrics.normalign else "–"],
                 [[task, row["n"], *[row["prefalign"][c] for c in conditions],
                   *[row["accuracy"][c] for c in conditions],
                   _normalign_cell(metrics, task)] for task, row in metrics.per_task.items()])
    if metrics.normalign:
        _normalign_section(report, metrics)
    _questions_section(report, metrics, records)
    _data_notes(report, metrics)


def _normalign_cell(metrics: PrefdiscoMetrics, task: str) -> object:
    value = metrics.normalign.get(task)
    if value is None:
        return None
    return "undefined" if value.undefined else value.value


def _normalign_section(report: HtmlReport, metrics: PrefdiscoMetrics) -> None:
    report.heading("NormAlign")
    report.paragraph("100 × (discovery − baseline) / (oracle − baseline) on paired PrefAlign "
                     "means: 0 = no better than not asking, 100 = as good as being told. "
                     "Undefined where oracle and baseline are within 1e-6 (the raw gains are "
                     "shown). Share of tasks with negative NormAlign: "
                     f"{_pct(metrics.negative_normalign_share)}.")
    report.table(["task", "NormAlign", "CI low", "CI high", "discovery − baseline",
                  "oracle − baseline", "n"],
                 [[task, "undefined" if v.undefined else v.value, v.ci_low, v.ci_high,
                   v.discovery_gain, v.oracle_gain, v.n] for task, v in metrics.normalign.items()])
    report.figure(bars_with_ci({task: (v.value, v.ci_low, v.ci_high)
                                for task, v in metrics.normalign.items()},
                               "NormAlign", "NormAlign per task (95 % CI)"),
                  "NormAlign per task with paired bootstrap CIs")


def _questions_section(report: HtmlReport, metrics: PrefdiscoMetrics, records: list[dict]) -> None:
    if not metrics.questions_asked:
        return
    report.heading("Questions asked and preferences discovered")
    report.table(["condition", "question turns", "questions (?)", "preferences revealed",
                  "share of preferences"],
                 [[c, q["turns"], q["questions"], metrics.preferences_discovered[c],
                   metrics.preferences_discovered_share[c]]
                  for c, q in metrics.questions_asked.items()])
    report.figure(grouped_bars({c: {"PrefAlign / 5": (metrics.prefalign[c].mean or 0) / 5,
                                    "accuracy": metrics.accuracy[c].mean}
                                for c in metrics.conditions}, "score", "By condition"),
                  "PrefAlign (divided by 5) and accuracy per condition")
    gain = metrics.questions_vs_gain
    if gain:
        report.paragraph(f"Questions asked vs PrefAlign gain over baseline (discovery): "
                         f"Pearson r = {_num(gain.get('r'))}, p = {_num(gain.get('p'))}, "
                         f"n = {gain.get('n')}.")
        points = _gain_points(records)
        if points:
            report.figure(scatter([p[0] for p in points], [p[1] for p in points],
                                  "questions asked", "PrefAlign gain over baseline",
                                  "Questions vs gain"), "One point per paired instance")


def _gain_points(records: list[dict]) -> list[tuple[float, float]]:
    ok = {(r["instance"], r["condition"]): r for r in records if r["status"] == "ok"
          and r.get("prefalign") is not None and not r.get("dropped")}
    return [(r["questions"]["questions"], r["prefalign"] - ok[(i, "baseline")]["prefalign"])
            for (i, c), r in ok.items() if c == "discovery" and (i, "baseline") in ok]


def _data_notes(report: HtmlReport, metrics: PrefdiscoMetrics) -> None:
    report.heading("Data notes")
    judge = metrics.judge
    report.paragraph(f"Judge: {_pct(judge.get('invalid_rate'))} of {judge.get('replies', 0)} "
                     f"replies invalid; {judge.get('excluded_criteria', 0)} criterion score(s) "
                     "excluded (their weight renormalised over the rest).")
    agreement = judge.get("agreement")
    if agreement:
        report.paragraph(f"Judge agreement ({agreement['method']}): {_num(agreement['value'])} "
                         f"over {agreement['n']} criterion scores.")
    if metrics.renormalised_weights:
        report.paragraph(f"Weights renormalised to sum to 1 (they did not) in "
                         f"{len(metrics.renormalised_weights)} instance(s): "
                         f"{', '.join(metrics.renormalised_weights[:30])}.")
    else:
        report.paragraph("Every instance's weights summed to exactly 1: renormalising changed "
                         "nothing.")
    if metrics.data_warnings:
        report.paragraph(f"Data warnings in {len(metrics.data_warnings)} instance(s):")
        report.table(["instance", "warning"], [[key, "; ".join(warnings)] for key, warnings
                                               in metrics.data_warnings.items()])
    if metrics.unpaired:
        report.paragraph(f"{len(metrics.unpaired)} instance(s) left out of every condition's "
                         "means (not scored in some condition):")
        report.table(["instance", "why"], [[u["instance"], "; ".join(u["reasons"])]
                                           for u in metrics.unpaired])
    if metrics.skipped_invalid:
        report.paragraph(f"{len(metrics.skipped_invalid)} invalid record(s) skipped "
                         "(--skip-invalid):")
        report.table(["where", "problem_id", "field", "problem"],
                     [[s["where"], s["problem_id"], s["field"], s["problem"]]
                      for s in metrics.skipped_invalid])


def browser_entries(records: Iterable[dict]) -> BrowserItems:
    """Every (instance, condition): transcript, final answer, each criterion's score and why;
    wrong answers first."""
    entries = (_entry(r) for r in records if r["status"] == "ok" or r.get("transcript"))
    return first_entries((((e.facets["correct"] != "wrong", e.title), e) for e in entries),
                         FACETS)


def _entry(record: dict) -> BrowserEntry:
    fields = []
    for index, turn in enumerate(record.get("transcript") or []):
        if turn["action"] == "ask":
            revealed = ", ".join(turn.get("revealed", [])) or "none"
            fields.append((f"turn {index + 1}: question", turn["text"]))
            fields.append((f"turn {index + 1}: user (revealed: {revealed})", turn["reply"]))
    fields.append(("final answer", record.get("response", "")))
    for criterion in record.get("criteria", []):
        for verdict in criterion["verdicts"]:
            score = "excluded" if verdict["score"] is None else verdict["score"]
            fields.append((f"{criterion['preference']} (w={criterion['normalised_weight']:.2f}):"
                           f" {score}", verdict["justification"] or verdict.get("problem") or ""))
    correctness = record.get("correctness") or {}
    correct = ("failed" if record["status"] != "ok" else "unparsed" if correctness.get("unparsed")
               else "right" if correctness.get("correct") else "wrong")
    flagged = any(c["score"] is None for c in record.get("criteria", []))
    prefalign = record.get("prefalign")
    title = (f"{record['instance']} · {record['condition']} · PrefAlign "
             f"{'–' if prefalign is None else f'{prefalign:.2f}'}")
    return BrowserEntry(title=title, fields=fields, facets={
        "condition": record["condition"], "task": record["task"], "correct": correct,
        "judge": "dropped" if record.get("dropped") else "flagged" if flagged else "clean"})


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
