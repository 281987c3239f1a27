"""The `personalens` command."""

import sys

import typer

from personalens.cli import (
    demo_command,
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
                  no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False)
app.add_typer(personabench_commands.app, name="personabench")
app.add_typer(pqb_commands.app, name="pqb")
app.add_typer(prefdisco_commands.app, name="prefdisco")
app.add_typer(prisk_commands.app, name="prisk")
app.command()(generate_commands.generate)
app.command()(demo_command.demo)


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

