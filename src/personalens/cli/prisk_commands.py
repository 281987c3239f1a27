"""`personalens prisk ...`: the attribution statistics of PRISK."""

from pathlib import Path
from typing import Annotated

import typer

from personalens.cli.run_output import report_outcome

app = typer.Typer(help="PRISK: the hidden costs of personalisation, and the statistics that "
                       "attribute them to the profile and to memory.", no_args_is_help=True)


@app.command("stats")
def stats_command(
    scores: Annotated[Path, typer.Option(help="CSV with columns record, profile (0/1), memory "
                                              "(0/1), score; optional risk and model.")],
    out: Annotated[Path, typer.Option(help="Run directory for metrics.json and report.html.")],
    coding: Annotated[str, typer.Option(help="treatment (0/1) or effect (±0.5) coding of P "
                                             "and M.")] = "treatment",
    correction: Annotated[str, typer.Option(help="holm or bh, across models x risks x "
                                                 "effects.")] = "holm",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation draws.")] = 0,
) -> None:
    """Mixed-effects attribution (REML), partial η², cell-mean CIs and sign-flip tests."""
    from personalens.lenses.prisk.attribution import PriskStats, StatsOptions
    from personalens.runs import run_lens

    options = StatsOptions(scores=scores, out=out, coding=coding, correction=correction,
                           seed=seed)
    report_outcome(run_lens(PriskStats(options), out))
