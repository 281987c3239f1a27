"""`personalens judge-audit RUN --out DIR` and `judge-audit export RUN --out labels.csv`.

Light to import (the CLI loads it for `--help`): the engine loads when a command runs.
"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.models.role_set import RoleModels
from personalens.runs.options import user_path

AUDIT_EXAMPLE = "personalens judge-audit runs/eval --out runs/eval-audit"
# `run` is the default command: the explicit form, for `judge-audit run --help`.
RUN_EXAMPLE = "personalens judge-audit run runs/eval --out runs/eval-audit"
EXPORT_EXAMPLE = "personalens judge-audit export runs/eval --out labels.csv"
_RUN_HELP = "A finished run directory of a judged lens command (an LLM judge scored it)."
_SAMPLE_HELP = "Verdicts sampled per judged metric (seeded). Default: all, at most 200."


def audit(
    run: Annotated[Path, typer.Argument(parser=user_path, metavar="RUN", help=_RUN_HELP)],
    out: Annotated[Path, typer.Option(parser=user_path, help="The audit's run directory "
                                      "(audit.json, report.html); rerunning resumes it.")],
    sample: Annotated[int | None, typer.Option(help=_SAMPLE_HELP)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample, the off-topic answers and "
                                           "the bootstrap CIs.")] = 0,
    repeats: Annotated[int, typer.Option(help="Fresh samples of each verdict (new seeds, "
                                              "never the cache): stability, and the headline "
                                              "CI with the judge's noise.")] = 1,
    checks: Annotated[str, typer.Option(help="Comma-separated: probes, stability, order, "
                                             "wording.")] = "probes,stability,order,wording",
    labels: Annotated[Path | None, typer.Option(
        parser=user_path, help="People's labels (a filled `judge-audit export` sheet): the "
                               "judge's agreement with them.")] = None,
    thresholds: Annotated[str, typer.Option(help="Override verdict thresholds, e.g. "
                                                 "alpha=0.8:0.667,probe=0.9:0.75.")] = "",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the calls the audit would "
                                                            "make; call no model, write "
                                                            "nothing.")] = False,
    *, models: RoleModels,
) -> None:
    """Measure the LLM judge(s) that scored a run: known-answer probes built from the run's own
    items, the same verdicts asked again, reworded and with their texts swapped, agreement
    between judges and with people. Each figure gets a verdict: reliable, doubtful or
    unreliable."""
    from personalens.judge_audit.options import AuditOptions

    judge = models["judge"]
    options = AuditOptions.parse(
        run=run, out=out, sample=sample, seed=seed, repeats=repeats, checks=checks,
        labels=labels, thresholds=thresholds, models=models,
        judges=judge.spec if judge is not None else [])
    if dry_run:
        from personalens.judge_audit.call_plan import plan_calls

        for line in plan_calls(options).lines(models.prices):
            typer.echo(line)
        return
    from personalens.judge_audit.outputs import run_audit

    status = run_audit(options)
    if status:
        raise typer.Exit(status)


def export(
    run: Annotated[Path, typer.Argument(parser=user_path, metavar="RUN", help=_RUN_HELP)],
    out: Annotated[Path, typer.Option(parser=user_path, help="The CSV to write; the form to "
                                      "fill it goes beside it (same name, .html).")],
    sample: Annotated[int | None, typer.Option(help=_SAMPLE_HELP)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sample (use the audit's).")] = 0,
) -> None:
    """Write a sample of the run's verdicts for people to label: the item, the criterion and
    its anchored levels, the answer, and no model score; and an HTML form that fills the CSV
    offline. Give the filled CSV to the audit with --labels."""
    from personalens.judge_audit.outputs import export_labels

    form = export_labels(run, out, sample, seed)
    typer.echo(f"{out}: verdicts to label; open {form} to fill it in a browser, then "
               f"personalens judge-audit {run} --labels {out} --out DIR")
