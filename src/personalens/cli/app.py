"""The `personalens` command."""

import sys
from pathlib import Path
from typing import Annotated

import typer

from personalens.cli import (
    generate_commands,
    personabench_commands,
    pqb_commands,
    prefdisco_commands,
    prisk_commands,
)
from personalens.errors import InputError
from personalens.models import ModelCallFailed

app = typer.Typer(help="personalens: measure how well AI assistants understand, find, ask for "
                       "and safely use a person's private information.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
app.add_typer(personabench_commands.app, name="personabench")
app.add_typer(pqb_commands.app, name="pqb")
app.add_typer(prefdisco_commands.app, name="prefdisco")
app.add_typer(prisk_commands.app, name="prisk")
app.command()(generate_commands.generate)

DEMO_SCHEMA = (Path(__file__).resolve().parent.parent / "population" / "data"
               / "demo_schema.yaml")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Directory for the demo's two runs.")
                   ] = Path("runs/demo"),
) -> None:
    """Generate a 3-person community with the bundled model, then evaluate it offline.

    Generation uses a small 8-attribute template (noise levels 0.0 and 0.5); evaluation uses BM25
    and MiniLM at noise 0.5, with answers by the bundled SmolLM2. Both steps resume.
    """
    from personalens.cli.run_output import report_outcome
    from personalens.lenses.personabench.command import EvalOptions, run_eval
    from personalens.models import DEFAULT_MODEL
    from personalens.population.generate import GenerateOptions, run_generate

    generation = GenerateOptions(people=3, communities=1, model=DEFAULT_MODEL,
                                 out=out / "population", noises=["0.0", "0.5"],
                                 attributes_per_person=2, max_list_entries=2,
                                 schema=DEMO_SCHEMA)
    generated = run_generate(generation)
    if not generated.complete:
        typer.echo(f"generation incomplete; see {out / 'population' / 'report.html'} and rerun "
                   "the same command", err=True)
        raise typer.Exit(3)
    typer.echo(f"generated: {generated.metrics.data}")
    options = EvalOptions(data=out / "population" / "synthetic_data", out=out / "eval",
                          noises=["0.5"], retrievers=["bm25", "minilm"], k=5,
                          model=DEFAULT_MODEL)
    report_outcome(run_eval(options))


def main() -> None:
    try:
        app()
    except InputError as exc:
        # One line, no traceback: the message already names the file, record and field.
        print(f"personalens: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except ModelCallFailed as exc:  # outside a run (e.g. a validation judge): nothing to record
        print(f"personalens: error: model call failed: {exc}", file=sys.stderr)
        sys.exit(3)

