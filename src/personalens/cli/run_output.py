"""What every run command prints at the end, and its exit status."""

import typer

from personalens.runs import Outcome

INCOMPLETE = 3


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
                   f"{tally.n_planned - tally.n_recorded} not recorded; rerun the same command "
                   "to retry them", err=True)
        raise typer.Exit(INCOMPLETE)
