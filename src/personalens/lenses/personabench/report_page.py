"""The PersonaBench sections of report.html: every metric as a table, recall plots, and a
browser of every question with what was retrieved, what the model said and the gold answer."""

import json
from collections.abc import Iterable

from personalens.lenses.personabench.analysis import CATEGORIES
from personalens.lenses.personabench.metrics import Condition, PersonabenchMetrics, Scores
from personalens.report import (
    BrowserEntry,
    BrowserItems,
    HtmlReport,
    first_entries,
    grouped_bars,
    line_plot,
)

_ROWS = (*CATEGORIES, "overall")
FACETS = ["category", "condition", "outcome"]


def report_sections(report: HtmlReport, metrics: PersonabenchMetrics) -> None:
    conditions = metrics.conditions
    _retrieval_section(report, conditions)
    if any(c.end_to_end is not None for c in conditions):
        _end_to_end_section(report, conditions, metrics.noise_robustness or {})


def _ci(scores: Scores, name: str) -> str | None:
    low, high = scores.ci_low.get(name), scores.ci_high.get(name)
    return None if low is None or high is None else f"{low:.3f}–{high:.3f}"


def _retrieval_section(report: HtmlReport, conditions: list[Condition]) -> None:
    report.heading("Retrieval")
    rows = [[c.label, name, s.recall, _ci(s, "recall"), s.ndcg, _ci(s, "ndcg"), s.n]
            for c in conditions for name, s in ((n, c.retrieval[n]) for n in _ROWS)]
    report.table(["condition", "category", "recall", "95% CI", "nDCG", "95% CI", "n"], rows)
    report.figure(
        grouped_bars({c.label: {n: c.retrieval[n].recall for n in _ROWS} for c in conditions},
                     "recall", "Retrieval recall per category"),
        "Retrieval recall per category per retriever and noise level",
    )
    if len({c.noise for c in conditions}) > 1:
        series: dict[str, list] = {}
        for c in sorted(conditions, key=lambda c: c.noise):
            series.setdefault(c.retriever, []).append((c.noise, c.retrieval["overall"].recall))
        report.figure(line_plot(series, "noise ratio", "overall recall", "Recall vs noise"),
                      "Overall retrieval recall against the noise ratio")


def _end_to_end_section(report: HtmlReport, conditions: list[Condition],
                        robustness: dict[str, float]) -> None:
    report.heading("End to end (answers)")
    rows = [[c.label, name, s.recall, s.precision, s.f1, _ci(s, "f1"), s.n]
            for c in conditions for name, s in ((n, c.end_to_end[n]) for n in _ROWS)]
    report.table(["condition", "category", "recall", "precision", "F1", "F1 95% CI", "n"], rows)
    report.heading("Information updating", level=3)
    report.table(["condition", "outdated-word recall", "score (1 − recall)", "95% CI", "n"],
                 [[c.label, c.info_updating.outdated_recall, c.info_updating.score,
                   _bounds(c.info_updating.ci_low.get("score"),
                           c.info_updating.ci_high.get("score")), c.info_updating.n]
                  for c in conditions])
    if robustness:
        report.heading("Noise robustness", level=3)
        report.table(["retriever", "1 − (F1 at lowest noise − F1 at highest)"],
                     sorted(robustness.items()))


def _bounds(low: float | None, high: float | None) -> str | None:
    return None if low is None or high is None else f"{low:.3f}–{high:.3f}"


def browser_entries(records: Iterable[dict]) -> BrowserItems:
    """One entry per question and condition, wrong and failed answers first."""
    return first_entries(((_wrong_first(r), _entry(r)) for r in records), FACETS)


def _outcome(record: dict) -> str:
    if record["status"] != "ok":
        return "failed"
    if "end_to_end" in record:
        # Correct: every gold word is in the answer (extra words cost precision, not this).
        return "correct" if record["end_to_end"]["recall"] == 1.0 else "incorrect"
    return "all found" if record["retrieval"]["recall"] == 1.0 else "missed some"


def _wrong_first(record: dict) -> tuple:
    order = {"failed": 0, "incorrect": 1, "missed some": 1, "correct": 2, "all found": 2}
    return order[_outcome(record)], record["key"]


def _entry(record: dict) -> BrowserEntry:
    fields = [("person", record["person"]),
              ("retrieved", ", ".join(record["retrieved_ids"])),
              ("ground-truth sessions", json.dumps(record["ground_truth"], ensure_ascii=False)),
              ("retrieval", f"recall {record['retrieval']['recall']:.3f}, nDCG "
                            f"{record['retrieval']['ndcg']:.3f}")]
    if "prediction" in record:
        e2e = record["end_to_end"]
        fields += [("model answer", record["prediction"]),
                   ("answer score", f"precision {e2e['precision']:.3f}, recall "
                                    f"{e2e['recall']:.3f}, F1 {e2e['f1']:.3f}")]
    if record["status"] != "ok":
        fields.append(("error", f"{record['error']['kind']}: {record['error']['message']}"))
    fields.append(("gold answer", json.dumps(record["answer"], ensure_ascii=False)))
    noise = float(record["noise"])
    return BrowserEntry(title=record["question"], fields=fields, facets={
        "category": record["category"], "outcome": _outcome(record),
        "condition": f"{record['retriever']} @ noise {noise:g}"})
