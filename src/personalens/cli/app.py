"""The `personalens` command."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from personalens.cli import personabench_commands
from personalens.errors import InputError

app = typer.Typer(help="personalens: measure how well AI assistants understand, find, ask for "
                       "and safely use a person's private information.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
app.add_typer(personabench_commands.app, name="personabench")

EXAMPLE_DATA = (Path(__file__).resolve().parent.parent / "lenses" / "personabench"
                / "example_data")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Run directory for the demo.")] = Path("runs/demo"),
) -> None:
    """Evaluate the bundled example community offline: BM25 and MiniLM, answers by SmolLM2."""
    from personalens.cli.interruption import interruptible
    from personalens.cli.progress import ItemProgress
    from personalens.lenses.personabench.command import EvalOptions, run_eval
    from personalens.models import DEFAULT_MODEL

    options = EvalOptions(data=EXAMPLE_DATA, out=out, noises=["0.0", "0.5"],
                          retrievers=["bm25", "minilm"], k=5, model=DEFAULT_MODEL)
    personabench_commands.finish(interruptible(lambda: run_eval(options, ItemProgress("demo"))))


def main() -> None:
    try:
        app()
    except InputError as exc:
        # One line, no traceback: the message already names the file, record and field.
        print(f"personalens: error: {exc}", file=sys.stderr)
        sys.exit(2)

