"""The audit's report sections: the verdicts, every figure, the failed probes as pairs of texts
with their two scores, agreement between judges, and the headline under each judge."""

from personalens.judge_audit.metrics import AuditMetrics, FailedProbe, MetricAudit
from personalens.judge_audit.thresholds import SOURCES
from personalens.lenses.judged import ProbeFamily
from personalens.report import HtmlReport
from personalens.report.markup import tag

_STYLE = (".pair{display:grid;grid-template-columns:1fr 1fr;gap:1em;margin:.5em 0 1.5em}"
          ".pair pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:0}"
          ".unreliable{color:#b00020;font-weight:600}.doubtful{color:#a15c00}"
          ".reliable{color:#176b2c}")
_GENERIC = {"off_topic": "another item's answer, to another question, scores at the bottom",
            "empty": "an empty answer scores at the bottom"}
_CHECKS = {"stability": "the same verdict asked again, a fresh sample with another seed",
           "order": "the two texts the judge compares, in the other order",
           "wording": "the rubric in its second, equivalent wording",
           "people": "the judge against people's labels",
           "judges": "two judges on the same verdicts"}


def sections(report: HtmlReport, metrics: AuditMetrics,
             families: tuple[ProbeFamily, ...]) -> None:
    report.stylesheet(_STYLE)
    report.heading("Verdicts")
    report.paragraph("A judged figure of this run can be trusted as far as its judge passes "
                     "these checks. A judge is reliable on a metric when every figure below "
                     "reaches its threshold, doubtful when some only reach the lower one (or "
                     "rest on fewer units than it takes to tell), unreliable otherwise.")
    report.table(["metric", "judge", "verdict", "headline on the sample", "95% CI",
                  "the run's own", "largest shift when re-asked"],
                 [[audit.label, judge, found.verdict, found.headline.value,
                   _ci(found.headline.ci_low, found.headline.ci_high), audit.run_headline,
                   found.instability.get("max")]
                  for audit in metrics.metrics.values() for judge, found in audit.judges.items()])
    _what_was_checked(report, families)
    for audit in metrics.metrics.values():
        _metric(report, audit)
    _thresholds(report, metrics)
    if metrics.people:
        report.heading("People")
        report.paragraph(f"{metrics.people['labelled']} labels of {metrics.people['units']} "
                         f"verdicts by {len(metrics.people['annotators'])} annotator(s), from "
                         f"{metrics.people['labels']}. For comparison: "
                         f"{metrics.people['published'] or 'no published figure'}.")


def _what_was_checked(report: HtmlReport, families: tuple[ProbeFamily, ...]) -> None:
    report.heading("What each check asks")
    rows = [[f"probe.{name}", text] for name, text in _GENERIC.items()]
    rows += [[f"probe.{f.name}", f"{f.checks} ({', '.join(f.metrics)})"] for f in families]
    rows += [[f"{name}.*", text] for name, text in _CHECKS.items()]
    report.table(["figure", "what it checks"], rows)


def _metric(report: HtmlReport, audit: MetricAudit) -> None:
    report.heading(f"{audit.label}: {audit.verdict}")
    report.paragraph(f"{audit.sampled} of the run's {audit.in_run} verdicts audited, on the "
                     f"{audit.scale[0]}-{audit.scale[1]} scale.")
    for judge, found in audit.judges.items():
        report.heading(f"{judge}: {found.verdict}", 3)
        report.table(["figure", "value", "95% CI", "n", "verdict"],
                     [[name, f.value, _ci(f.ci_low, f.ci_high), f.n, f.verdict]
                      for name, f in found.figures.items()])
        if found.invalid:
            report.paragraph(f"{found.invalid} request(s) got no valid verdict after every "
                             "attempt: left out of the figures above, not scored.")
        if found.headline.noise_ci_low is not None:
            headline = found.headline
            report.paragraph(f"Headline CI with the judge's own noise (scores drawn from the "
                             f"repeats): {_ci(headline.noise_ci_low, headline.noise_ci_high)}, "
                             f"against {_ci(headline.ci_low, headline.ci_high)} over items "
                             "alone.")
        _failed(report, found.failed_probes)
    if audit.between_judges:
        report.heading("Between judges", 3)
        report.table(["judges", "figure", "value", "95% CI", "n", "verdict"],
                     [[" vs ".join(pair.judges), name, f.value, _ci(f.ci_low, f.ci_high), f.n,
                       f.verdict] for pair in audit.between_judges
                      for name, f in pair.figures.items()])
    if audit.disagreements:
        judges = list(audit.judges)
        report.paragraph("Where the judges disagree, widest first:")
        report.table(["verdict", *judges],
                     [[row["verdict"], *[row["scores"].get(j) for j in judges]]
                      for row in audit.disagreements])


def _failed(report: HtmlReport, failed: list[FailedProbe]) -> None:
    if not failed:
        return
    report.paragraph(f"Probes that failed ({len(failed)} shown): the run's answer with the "
                     "judge's score, beside the probe with its score.")
    for probe in failed:
        report.markup(tag("p", tag("b", f"{probe.family}"), f" · {probe.verdict} · "
                      f"{probe.note} · expected {probe.expect.replace('_', ' ')}"))
        report.markup(tag("div", tag("div", f"answer, scored {_score(probe.first)}",
                                     tag("pre", probe.original)),
                          tag("div", f"probe, scored {_score(probe.score)}",
                              tag("pre", probe.probe or "(empty)")), class_="pair"))


def _thresholds(report: HtmlReport, metrics: AuditMetrics) -> None:
    report.heading("Thresholds")
    report.paragraph(f"A figure on fewer than {metrics.min_n} units is at best doubtful. "
                     "Change a threshold with --thresholds name=reliable:doubtful.")
    report.table(["figure kind", "reliable at or above", "doubtful at or above", "source"],
                 [[kind, high, low, SOURCES.get(kind, "")]
                  for kind, (high, low) in metrics.thresholds.items()])


def _ci(low: float | None, high: float | None) -> str:
    return "–" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _score(value: float | None) -> str:
    return "no valid verdict" if value is None else f"{value:g}"
