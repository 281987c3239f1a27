"""The `personalens` command."""

import importlib
import sys

import typer

from personalens.cli import demo_command, generate_commands
from personalens.cli.declared_command import lens_app
from personalens.errors import InputError
from personalens.lenses import LENSES
from personalens.models import ModelCallFailed

app = typer.Typer(help="personalens: measure how well AI assistants understand, find, ask for "
                       "and safely use a person's private information.",
                  no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False)
for lens in LENSES:
    try:  # TRANSITION: until every lens declares its commands
        app.add_typer(lens_app(importlib.import_module(f"personalens.lenses.{lens}.commands").LENS),
                      name=lens)
    except ModuleNotFoundError:
        try:
            app.add_typer(importlib.import_module(f"personalens.cli.{lens}_commands").app,
                          name=lens)
        except ImportError:
            pass
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

