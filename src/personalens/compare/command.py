"""`personalens compare RUN... --out DIR`, and a lens's alias of it for one command's runs
(`compare_command_for`, named by the lens's declaration).

Light to import (the CLI loads it for `--help`): the engine is imported when a command runs.
"""

from pathlib import Path
from typing import Annotated, Literal

import typer

from personalens.lenses.commands import comparable_commands
from personalens.runs.options import user_path

SIGNIFICANT = 0.05  # adjusted p below which the summary counts a pair as differing


def _summary(result: dict, out: Path) -> None:
    for name, run in result["runs"].items():
        shown = ", ".join(f"{result['headlines'][key]} "
                          f"{'–' if h['value'] is None else format(h['value'], '.3f')}"
                          for key, h in list(run["headlines"].items())[:4])
        typer.echo(f"{name}: {shown}" + ("" if run["status"] == "complete"
                                         else " [incomplete]"))
    if result["shared_items"] is not None:
        typer.echo(f"shared items: {result['shared_items']} (every figure covers only these)")
    differing = sum(p["p_adj"] is not None and p["p_adj"] < SIGNIFICANT for p in result["pairs"])
    typer.echo(f"paired comparisons: {len(result['pairs'])}, {differing} differ at adjusted "
               f"p < {SIGNIFICANT} ({result['correction']})")
    typer.echo(f"report: {out / 'report.html'}")


def compare_command_for(only: str | None):
    """`personalens compare`, or with `only` ("<lens> eval") an alias comparing only its runs."""
    def compare(
        runs: Annotated[list[Path], typer.Argument(
            parser=user_path, help="Run directories of one lens command "
                                   f"({' or '.join([only] if only else comparable_commands())}).")],
        out: Annotated[Path, typer.Option(parser=user_path,
                                          help="Folder for comparison.json and report.html.")],
        shared_items: Annotated[bool, typer.Option(
            "--shared-items", help="Runs on different data: compare them on the items all "
                                   "share (every figure is restricted to those).")] = False,
        allow_incomplete: Annotated[bool, typer.Option(
            "--allow-incomplete", help="Compare unfinished runs and runs with failed items, "
                                       "marked [incomplete] in every table.")] = False,
        correction: Annotated[Literal["holm", "bh"], typer.Option(
            help="Multiple-testing correction across the report's paired tests: holm "
                 "(family-wise) or bh (false discovery rate).")] = "holm",
        seed: Annotated[int, typer.Option(help="Seed of the bootstrap CIs and permutation "
                                               "tests.")] = 0,
    ) -> None:
        """Systems side by side in the lens's paper layout, with paired tests between every
        two on their shared items."""
        from personalens.compare.engine import compare_runs

        result = compare_runs(runs, out, shared_items=shared_items,
                              allow_incomplete=allow_incomplete, correction=correction,
                              seed=seed, command=only)
        _summary(result, out)
    return compare


compare_command = compare_command_for(None)
