"""The `personalens` command."""

import sys

import typer

from personalens.cli import demo_command
from personalens.cli.declared_command import declared, lens_app
from personalens.compare.command import compare_command
from personalens.errors import InputError
from personalens.lenses import LENSES
from personalens.lenses.commands import DeclaredCommand, lens_commands
from personalens.models import ModelCallFailed
from personalens.scorecard.command import scorecard_command

app = typer.Typer(help="personalens: measure how well AI assistants understand, find, ask for "
                       "and safely use a person's private information.",
                  no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False)
for lens in LENSES:
    app.add_typer(lens_app(lens_commands(lens)), name=lens)
GENERATE = DeclaredCommand(
    "generate", "personalens.population.generate_options:GenerateOptions",
    "personalens.population.generate:run_generate",
    "Generate synthetic communities in PersonaBench's release layout (plus hidden truth).\n\n"
    "With --executor ray, every community is generated at once, each by a Ray task with its "
    "own generator client; this process alone writes the records and the data.")
app.command("generate")(declared(GENERATE))
app.command()(demo_command.demo)
app.command("compare")(compare_command)
app.command("scorecard")(scorecard_command)


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

