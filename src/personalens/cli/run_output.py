"""What every run command prints at the end, and its exit status."""

import typer

from personalens.runs import Outcome
from personalens.runs.harness import INCOMPLETE


def report_outcome(outcome: Outcome) -> None:
    """Where the results are, the lens's headline figures; exit 3 while the run is incomplete."""
    typer.echo(f"report: {outcome.run_dir / 'report.html'}")
    typer.echo(f"metrics: {outcome.run_dir / 'metrics.json'}")
    for line in outcome.metrics.headlines():
        typer.echo(line)
    exit_if_incomplete(outcome)


def exit_if_incomplete(outcome: Outcome) -> None:
    """Say what failed and exit 3 while the run is incomplete (rerunning resumes it)."""
    if not outcome.complete:
        tally = outcome.tally
        steps = f", {len(tally.step_failures)} step(s)" if tally.step_failures else ""
        typer.echo(f"run incomplete: {tally.n_failed} item(s) failed{steps}, "
                   f"{tally.n_planned - tally.n_recorded} not recorded; {_retry_advice(tally)}",
                   err=True)
        raise typer.Exit(INCOMPLETE)


def _retry_advice(tally) -> str:
    """Whether rerunning can help: a deterministic model fails the same way again."""
    failures = [*tally.failures, *tally.step_failures]
    final = sum(1 for f in failures if f.final)
    unrecorded = tally.n_planned - tally.n_recorded
    if final and final == len(failures) and not unrecorded:
        return ("rerunning will not change them: the model is deterministic and would give the "
                "same replies (try another model or other options; failures are listed in "
                "metrics.json)")
    if final:
        return (f"rerun the same command to retry the rest; {final} will fail the same way "
                "(a deterministic model's reply)")
    return "rerun the same command to retry them"
