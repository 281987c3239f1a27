"""The frame every run's report.html shares: status, the lens's sections, a browser of items,
failures, model usage, and where the numbers come from."""

from collections.abc import Callable

from personalens.report.html_report import HtmlReport
from personalens.report.markup import Markup, tag
from personalens.report.question_browser import BrowserItems


def run_page(title: str, tally, manifest, *, summary: str,
             sections: Callable[[HtmlReport], None],
             browser: BrowserItems | None = None, judge_note: str | None = None) -> str:
    """`summary` is one line about the data and model; `sections` adds the lens's own parts.

    `tally` is the harness's count (`runs.Tally`): its `failures` are `runs.ItemFailure`s per
    failed item, its `step_failures` the same for steps that are not items; `manifest` is the
    run's `runs.Manifest`.
    """
    report = HtmlReport(title)
    report.paragraph(f"{summary} · status: {manifest.status.upper()}")
    if judge_note is not None:  # a judged run: how far its judge can be trusted
        report.markup(note_markup(judge_note))
    sections(report)
    if browser is not None and browser.entries:
        report.browser(browser.entries, browser.facets, total=browser.total,
                       heading="Every item (filter by the buttons; click one to open it)")
    _failures(report, tally.failures, tally.step_failures)
    _usage(report, manifest)
    report.heading("Where these numbers come from")
    report.paragraph("Every number above is computed from records.jsonl in this run directory "
                     "(one line per item or step); manifest.json holds the command, "
                     "configuration, package versions, dataset hash and model usage.")
    return report.render()


def note_markup(text: str) -> Markup:
    """The judge-audit line, as `runs.judge_note` finds it again to rewrite it."""
    return tag("p", text, id="judge-audit")


def _failures(report: HtmlReport, failures: list, step_failures: list) -> None:
    report.heading("Failures")
    if not failures and not step_failures:
        report.paragraph("No item failed.")
        return
    report.paragraph(f"{len(failures)} item(s) and {len(step_failures)} other step(s) failed "
                     "after retries. They are left out of every mean above and retried when "
                     "the same command is rerun.")
    rows = [[f.key, f.kind, f.attempts, f.message[:300]]
            for f in [*failures, *step_failures]]
    report.table(["item or step", "kind", "attempts", "message"], rows)


def _usage(report: HtmlReport, manifest) -> None:
    usage = manifest.usage
    if not usage:
        return
    report.heading("Model usage")
    report.table(["role", "requests", "cached", "prompt tokens", "completion tokens", "retries",
                  "failures"],
                 [[role, u["requests"], u["cached_requests"], u["prompt_tokens"],
                   u["completion_tokens"], sum(u["retries"].values()),
                   sum(u["failures"].values())] for role, u in usage.items()])
    if manifest.estimated_cost_usd:
        report.paragraph(f"Estimated cost: ${manifest.estimated_cost_usd:.4f} "
                         "(at the prices given on the command line).")
