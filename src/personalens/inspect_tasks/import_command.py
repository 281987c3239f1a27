"""`personalens import-inspect LOG... --out RUN_DIR`.

Light to import (the CLI loads it for `--help`): Inspect is imported when the command runs.
"""

from pathlib import Path
from typing import Annotated

import typer

from personalens.errors import InputError
from personalens.runs.harness import INCOMPLETE
from personalens.runs.options import user_path


def import_inspect_command(
    logs: Annotated[list[Path], typer.Argument(
        parser=user_path, help="Inspect logs (.eval or .json) of one personalens task, e.g. "
                               "`inspect eval personalens/<lens>`'s.")],
    out: Annotated[Path, typer.Option(parser=user_path, help="Run directory to write.")],
) -> None:
    """Turn Inspect logs of a personalens task into a personalens run directory (manifest,
    records, metrics, report), so `personalens compare` and the reports read it."""
    try:
        from personalens.inspect_tasks.log_import import import_logs
    except ModuleNotFoundError as exc:
        if exc.name != "inspect_ai":
            raise
        raise InputError("Inspect is not installed: pip install 'personalens[inspect]'") from None
    outcome = import_logs(logs, out)
    for line in outcome.metrics.headlines():
        typer.echo(line)
    typer.echo(f"run: {outcome.run_dir}")
    if not outcome.complete:
        typer.echo(f"{outcome.tally.n_failed} item(s) failed in Inspect", err=True)
        raise typer.Exit(INCOMPLETE)
