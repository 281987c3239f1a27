"""Commands built from what a lens declares: its options model, its roles and its runner.

A declared run command's flags, defaults and help come from the options model's fields (see
`runs.options`); its role flags from the model's `roles` (`cli.model_options`). The command
validates the options (one line and exit 2 for a bad value), runs, prints where the report is
and exits 3 while the run is incomplete. A lens's other commands (validate, compare) are typer
functions in its package, given their role options the same way.
"""

import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import click
import pydantic
import typer
from pydantic_core import PydanticUndefined

from personalens.cli.lazy_group import LazyGroup
from personalens.cli.model_options import model_roles
from personalens.lenses.commands import DeclaredCommand, LensCommands, TyperCommand, resolve
from personalens.runs.options import user_path


def lens_group(lens: LensCommands) -> click.Command:
    """The lens's sub-command group: each command it declares, built when it is called."""
    commands = {command.name: command for command in lens.commands}

    def summaries() -> dict[str, str]:
        return {name: _summary(command) for name, command in commands.items()}

    def build(name: str) -> click.Command | None:
        command = commands.get(name)
        if command is None:
            return None
        function = declared(command) if isinstance(command, DeclaredCommand) else plain(command)
        return typer_command(name, function, command.example)

    return LazyGroup(name=lens.name, help=lens.help, no_args_is_help=True,
                     rich_markup_mode=None, summaries=summaries, build=build)


def typer_command(name: str, function: Callable, example: str = "") -> click.Command:
    """The click command typer makes of `function` (its annotations are the options)."""
    app = typer.Typer(rich_markup_mode=None, add_completion=False)
    app.command(name, epilog=example_epilog(example))(function)
    return typer.main.get_command(app)


def _summary(command: DeclaredCommand | TyperCommand) -> str:
    """A command's first paragraph (a plain command's docstring: its module is imported)."""
    text = command.help if isinstance(command, DeclaredCommand) else (
        command.typer_function().__doc__ or "")
    return inspect.cleandoc(text).split("\n\n")[0].replace("\n", " ")


def example_epilog(example: str) -> str | None:
    """A command's example, shown after its options (\b keeps click from rewrapping it)."""
    return f"\b\nExample:\n  {example}" if example else None


def declared(command: DeclaredCommand) -> Callable:
    """A typer command for a declared run command."""
    options_model = command.options_model()
    roles = getattr(options_model, "roles", ())
    # The command's own options first, then those it shares (the executor's).
    names = sorted(options_model.model_fields,
                   key=lambda name: name not in options_model.__annotations__)
    fields = {name: options_model.model_fields[name] for name in names
              if _extra(options_model.model_fields[name]).get("cli", True)}

    def run(**values: Any) -> None:
        models = values.pop("models", None)
        dry_run = values.pop("dry_run", False)
        given = {name: value for name, value in values.items() if value is not None}
        options = options_model.parse(**given, **({"models": models} if roles else {}))
        if dry_run:
            print_plan(resolve(command.dry_run)(options), options)
            return
        from personalens.cli.run_output import report_outcome  # the harness: when a run runs

        report_outcome(resolve(command.run)(options))

    parameters = [_parameter(name, field) for name, field in fields.items()]
    if command.dry_run:
        parameters.append(inspect.Parameter(
            "dry_run", inspect.Parameter.KEYWORD_ONLY, default=False,
            annotation=Annotated[bool, typer.Option(
                "--dry-run", help="Print the plan (items, model calls per role, estimated "
                                  "tokens, the cost when prices are given) and call no model; "
                                  "nothing is written.")]))
    if roles:
        parameters.append(inspect.Parameter("models", inspect.Parameter.KEYWORD_ONLY))
    run.__signature__ = inspect.Signature(parameters)
    run.__doc__ = command.help
    run.__name__ = command.name.replace("-", "_")
    return model_roles(*roles)(run) if roles else run


def print_plan(plan, options) -> None:
    """The dry run's plan, naming each role's model (fallbacks applied) and its cost."""
    models = getattr(options, "models", None)
    if models is not None:
        resolved = models.resolved(getattr(type(options), "roles", ()))
        plan.specs = {**{role: s.spec for role, s in resolved.items() if role in plan.roles},
                      **plan.specs}  # a plan may name its own (several judges)
    for line in plan.lines(models.prices if models is not None else {}):
        typer.echo(line)


def plain(command: TyperCommand) -> Callable:
    function = command.typer_function()
    return model_roles(*command.roles)(function) if command.roles else function


def _extra(field: pydantic.fields.FieldInfo) -> dict:
    return field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}


def _parameter(name: str, field: pydantic.fields.FieldInfo) -> inspect.Parameter:
    extra = _extra(field)
    help_text = field.description or ""
    required = field.default is PydanticUndefined and field.default_factory is None
    default = field.get_default(call_default_factory=True) if not required else None
    kind, shown = _cli_type(field.annotation)
    flags = [extra["flag"]] if extra.get("flag") else []
    if kind is Path or kind == list[Path]:  # read like every path: ~, relative, symlinks kept
        info = typer.Option(*flags, parser=user_path, help=help_text)
    elif kind is bool:
        info = typer.Option(*(flags or ["--" + name.replace("_", "-")]), help=help_text)
    else:
        info = typer.Option(*flags, help=help_text)
    if shown == "comma" and default is not None:
        default = ",".join(str(v) for v in default)
    if kind == list[Path] and not default:
        default = None
    optional = kind | None if default is None and not required else kind
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                             default=inspect.Parameter.empty if required else default,
                             annotation=Annotated[optional, info])


def _cli_type(annotation: Any) -> tuple[Any, str]:
    """The type the CLI reads for a field, and how: "comma" for a comma-separated list."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return _cli_type(args[0])
    if origin is Annotated:
        return _cli_type(args[0])
    if origin is list:
        item = _cli_type(args[0])[0]
        return (list[Path], "repeat") if item is Path else (str, "comma")
    if origin is typing.Literal:
        return type(args[0]), "plain"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return Path, "plain"
    return annotation, "plain"

