"""A lens's Inspect task parameters, generated from its options model as the CLI's flags are:
each parameter is the option of the same name (its type, default and help), a comma-separated
list read as one string (`-T conditions=base,profile`), a path as a string. The lens declares
which options the task takes (`lenses.commands.InspectTask`), the defaults the task has of its
own and the old names it still reads.

Light to import (no Inspect): the docs' reference reads it too.
"""

import inspect
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from personalens.errors import InputError
from personalens.lenses.commands import InspectTask, lens_commands
from personalens.runs.options import LensOptions

REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Parameter:
    name: str
    annotation: Any  # what a task argument is: str, int, float, bool, or one of them | None
    default: Any  # REQUIRED when the task needs it
    help: str
    option: str  # the option it sets (an old name's is the option's new name)
    comma: bool = False  # a comma-separated list, given as one string

    def signature(self) -> inspect.Parameter:
        return inspect.Parameter(self.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                 default=self.default, annotation=self.annotation)


def declaration(lens: str) -> tuple[InspectTask, type[LensOptions]]:
    """The lens's Inspect declaration and its command's options model."""
    declared = lens_commands(lens)
    if declared.inspect is None:
        raise ValueError(f"the lens {lens!r} declares no Inspect task")
    return declared.inspect, declared.command(declared.inspect.command).options_model()


def task_parameters(spec: InspectTask, options: type[LensOptions]) -> list[Parameter]:
    """The task's parameters, in the declared order, then the old names."""
    out = []
    for name in spec.parameters:
        field = options.model_fields[name]
        kind, optional, comma = _argument_type(field.annotation)
        required = field.is_required()
        default = REQUIRED if required else spec.defaults.get(name, field.get_default(
            call_default_factory=True))
        if comma and isinstance(default, list):
            default = ",".join(str(v) for v in default)
        elif isinstance(default, Path):
            default = str(default)
        out.append(Parameter(name, kind | None if optional or default is None else kind,
                             default, field.description or "", name, comma))
    for old, new in spec.aliases.items():
        option = next(p for p in out if p.name == new)
        out.append(Parameter(old, option.annotation | None, None, f"The old name of {new}.",
                             new, option.comma))
    return out


def task_arguments(parameters: list[Parameter], args: tuple, kwargs: dict) -> dict[str, Any]:
    """The options a task's call sets, by option name (every parameter's value or default;
    an old name's value under its option); InputError for an option given twice."""
    signature = inspect.Signature([p.signature() for p in parameters])
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise InputError(f"task arguments: {exc}") from None
    given = dict(bound.arguments)
    bound.apply_defaults()
    out: dict[str, Any] = {}
    for parameter in parameters:
        value = bound.arguments[parameter.name]
        if parameter.option != parameter.name:  # an old name
            if parameter.name not in given:
                continue
            if parameter.option in given:
                raise InputError(f"give {parameter.option} or its old name {parameter.name}, "
                                 "not both")
        if parameter.comma and value is not None and not isinstance(value, list):
            value = str(value)  # -T noise=0.5 arrives as a number
        out[parameter.option] = value
    return out


def docstring(summary: str, parameters: list[Parameter]) -> str:
    lines = [summary, "", "Args:"]
    lines += [f"    {p.name}: {p.help}" for p in parameters]
    return "\n".join(lines)


def _argument_type(annotation: Any) -> tuple[type, bool, bool]:
    """(the argument's type, whether None is allowed, whether it is a comma-separated list)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _argument_type(args[0])
    if origin in (typing.Union, types.UnionType):
        kinds = [a for a in args if a is not type(None)]
        kind, _, comma = _argument_type(kinds[0])
        return kind, len(kinds) < len(args), comma
    if origin is list:
        return str, False, True
    if origin is typing.Literal:
        return type(args[0]), False, False
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return str, False, False
    return annotation, False, False

