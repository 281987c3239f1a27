"""The `personalens` command: a root group whose sub-commands load only when they are called.

`personalens --version` and `personalens --help` import no command: the root lists each
sub-command's one-line summary (`cli.subcommands`; a lens's from its light
declaration) and builds a sub-command (its options models, its model roles) only when it is
run or asked for its own --help.
"""

import importlib.metadata
import sys
from typing import Annotated

import typer

from personalens.cli.lazy_group import LazyGroup
from personalens.cli.subcommands import build_subcommand, subcommand_summaries
from personalens.errors import InputError

HELP = ("personalens: measure how well AI assistants understand, find, ask for and safely use "
        "a person's private information.")


class RootGroup(LazyGroup):
    """The root: every sub-command's summary without imports, each built when called."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, summaries=subcommand_summaries, build=build_subcommand, **kwargs)


app = typer.Typer(cls=RootGroup, help=HELP, no_args_is_help=True, rich_markup_mode=None,
                  pretty_exceptions_enable=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"personalens {importlib.metadata.version('personalens')}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", "-V", is_eager=True, callback=_version,
        help="Print the version (each run's manifest records it too) and exit.")] = False,
) -> None:
    """The root's own options (its help is HELP; sub-commands load when called)."""


def main() -> None:
    try:
        app()
    except InputError as exc:
        # One line, no traceback: the message already names the file, record and field.
        print(f"personalens: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except Exception as exc:
        # Imported here: a model failure's module is loaded whenever one was raised, and the
        # root's --help and --version stay free of pydantic.
        from personalens.models.failures import ModelCallFailed

        if not isinstance(exc, ModelCallFailed):
            raise
        # Outside a run (e.g. a validation judge): nothing to record.
        print(f"personalens: error: model call failed: {exc}", file=sys.stderr)
        sys.exit(3)
