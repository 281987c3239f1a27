"""`personalens scorecard`: several systems through every lens on one population.

Light to import (the CLI loads it for `--help`): the lenses are imported when it runs.
"""

from pathlib import Path
from typing import Annotated, Literal

import typer

from personalens.runs.harness import INCOMPLETE
from personalens.runs.options import user_path


def scorecard_command(
    system: Annotated[list[str], typer.Option(
        help="A system: NAME=MODEL[,retriever=R][,base_url=URL] (repeat for each). Its model "
             "is every lens's target (the assistant); its retriever (default minilm) serves "
             "every lens that retrieves.")],
    out: Annotated[Path, typer.Option(parser=user_path, help="Folder of every run, "
                                      "scorecard.json and scorecard.html; rerunning resumes.")],
    judge: Annotated[str, typer.Option(
        help="The one fixed model that judges, plays simulated users and generates the data, "
             "for every system. Default: the bundled model (offline).")] = "",
    judge_base_url: Annotated[str | None, typer.Option(
        help="An OpenAI-compatible server for --judge.")] = None,
    size: Annotated[Literal["tiny", "small", "standard"], typer.Option(
        help="tiny (minutes, the bundled model), small, standard: see "
             "docs/compare-models.md for the items and calls of each.")] = "small",
    population: Annotated[Path | None, typer.Option(
        parser=user_path, help="A `personalens generate` folder to use instead of generating "
                               "one.")] = None,
    lenses: Annotated[str | None, typer.Option(
        help="Comma-separated lenses to run. Default: every lens.")] = None,
    correction: Annotated[Literal["holm", "bh"], typer.Option(
        help="Correction across the scorecard's paired tests.")] = "holm",
    seed: Annotated[int, typer.Option(help="Seed of the paired bootstrap and tests.")] = 0,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the plan (runs, items, model calls per model, estimated "
                          "tokens and cost) and call no model; nothing is written.")] = False,
    audit_judges: Annotated[bool, typer.Option(
        "--audit-judges", help="Audit the judge on every judged lens run (personalens "
                               "judge-audit): each judged cell shows its judge's verdict, and "
                               "a pair within the judge's own instability is marked.")] = False,
    price: Annotated[list[str] | None, typer.Option(
        help="MODEL=IN,OUT: USD per million prompt and completion tokens of a model, for "
             "--dry-run's cost (repeat per model).")] = None,
) -> None:
    """Evaluate several systems through every lens on one population, and compare them.

    Generates the population (or takes --population), builds each lens's data from it once,
    then runs every lens for every system into DIR/<lens>/<system>/.
    Rerunning resumes; adding a system reuses everything already computed.
    """
    from personalens.scorecard.inputs import make_plan, parse_prices
    from personalens.scorecard.runner import Incomplete, run_scorecard

    plan = make_plan(system, out=out, judge=judge, judge_base_url=judge_base_url, size=size,
                     population=population, lenses=lenses)
    if dry_run:
        from personalens.scorecard.dry_run import plan_lines

        for line in plan_lines(plan, parse_prices(price or [])):
            typer.echo(line)
        return
    try:
        card, complete = run_scorecard(plan, correction=correction, seed=seed,
                                       echo=lambda text: typer.echo(text, err=True),
                                       audit_judges=audit_judges)
    except Incomplete as exc:
        typer.echo(f"scorecard incomplete: {exc}", err=True)
        raise typer.Exit(INCOMPLETE) from None
    typer.echo(f"scorecard: {out / 'scorecard.html'}")
    typer.echo(f"figures: {out / 'scorecard.json'}")
    if not complete:
        typer.echo("some runs did not finish (marked in the card); rerun the same command to "
                   "resume them", err=True)
        raise typer.Exit(INCOMPLETE)
