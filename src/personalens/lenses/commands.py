"""What a lens declares to the CLI: its commands, once (the registry is `lenses.LENSES`).

Each lens package has a `commands.py` holding `LENS = LensCommands(...)`. A run command is
declared by its options model and its runner; the CLI builds its flags from the model
(`cli.declared_command`). Targets are "module:name" strings, imported only when a command
runs, so `personalens --help` loads no lens's models or data.
"""

import importlib
from dataclasses import dataclass, field

from personalens.models.role_set import Role


def resolve(target: str):
    """"package.module:name" -> the object, imported now (not when the registry is read)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class DeclaredCommand:
    name: str
    options: str  # "module:OptionsModel", a runs.LensOptions subclass (light to import)
    run: str  # "module:function" taking the options, returning a runs.Outcome
    help: str

    def options_model(self):
        return resolve(self.options)


@dataclass(frozen=True)
class TyperCommand:
    """A command that is not a run (validate, compare): a typer function in the lens."""

    name: str
    function: str  # "module:function", annotated for typer
    roles: tuple[Role, ...] = ()  # role options it takes (as `models: RoleModels`)


@dataclass(frozen=True)
class LensCommands:
    name: str  # the sub-command and the package under personalens.lenses
    help: str
    commands: list[DeclaredCommand | TyperCommand] = field(default_factory=list)
    data: tuple[str, ...] = ()  # package data globs under the lens's folder (pyproject)
