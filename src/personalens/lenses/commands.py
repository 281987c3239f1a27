"""What a lens declares to the CLI: its commands, once (the registry is `lenses.LENSES`).

Each lens package has a `commands.py` holding `LENS = LensCommands(...)`. A run command is
declared by its options model and its runner; the CLI builds its flags from the model
(`cli.declared_command`). Targets are "module:name" strings, imported only when a command
runs, so `personalens --help` loads no lens's models or data.

A run command whose runs `personalens compare` reads names its lens's `Comparison` (how a run
becomes systems, per-unit headlines and the paper's tables); the types it speaks in (Headline,
Table) are here, below the compare layer, so a lens never imports that layer.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from personalens.import_target import resolve
from personalens.lenses import LENSES
from personalens.models.role import Role


@dataclass(frozen=True)
class DeclaredCommand:
    name: str
    options: str  # "module:OptionsModel", a runs.LensOptions subclass (light to import)
    run: str  # "module:function" taking the options, returning a runs.Outcome
    help: str
    # "module:object", a `Comparison` of this command's runs (`personalens compare`); None:
    # its runs cannot be compared.
    comparison: str | None = None
    # "module:function" taking the options and returning a `runs.call_plan.CallPlan`: the
    # command's --dry-run (what a run would call, without calling a model); None: no dry run.
    dry_run: str | None = None
    example: str = ""  # one command line, the last thing its --help shows
    # "module:Class", a `lenses.judged.JudgedRun` of this command's runs: its verdicts are
    # LLM judges' (`personalens judge-audit`); None: no judged figure.
    judged: str | None = None

    def options_model(self):
        return resolve(self.options)


@dataclass(frozen=True)
class TyperCommand:
    """A command that is not a run (validate, compare): a typer function in the lens."""

    name: str
    function: str  # "module:function", annotated for typer
    roles: tuple[Role, ...] = ()  # role options it takes (as `models: RoleModels`)
    example: str = ""  # one command line, the last thing its --help shows


@dataclass(frozen=True)
class LensCommands:
    name: str  # the sub-command and the package under personalens.lenses
    help: str
    commands: list[DeclaredCommand | TyperCommand] = field(default_factory=list)
    data: tuple[str, ...] = ()  # package data globs under the lens's folder (pyproject)


def lens_commands(lens: str) -> LensCommands:
    """A registered lens's declaration (`personalens.lenses.<lens>.commands.LENS`)."""
    return resolve(f"personalens.lenses.{lens}.commands:LENS")


def comparable_commands() -> dict[str, DeclaredCommand]:
    """The run commands whose runs `personalens compare` reads, by name ("pqb eval")."""
    return {f"{lens} {command.name}": command for lens in LENSES
            for command in lens_commands(lens).commands
            if isinstance(command, DeclaredCommand) and command.comparison}


def judged_commands() -> dict[str, DeclaredCommand]:
    """The run commands whose figures LLM judges score (`personalens judge-audit`), by name."""
    return {f"{lens} {command.name}": command for lens in LENSES
            for command in lens_commands(lens).commands
            if isinstance(command, DeclaredCommand) and command.judged}


@dataclass(frozen=True)
class Headline:
    """A headline metric of one system as values per unit (a question, a query, a pair of
    users), so two systems can be compared unit by unit.

    `units` maps a unit's key (the same key in every run of the dataset) to its value, or to
    a row of values when `statistic` is given. Without a statistic the headline is the mean of
    the values; `binary` says they are 0/1 outcomes (McNemar's test, not sign-flip).
    `statistic` (rows -> value or None) is the headline when it is not a mean, e.g. a flip
    rate over pairs of hits."""

    label: str
    units: Mapping[str, float | tuple[float, ...]]
    binary: bool = False
    statistic: Callable[[Any], float | None] | None = None


@dataclass(frozen=True)
class Table:
    """One table of the lens's paper layout: a row per system (the first cell its name)."""

    title: str
    headers: list[str]
    rows: list[list[Any]]


class Comparison:
    """How `personalens compare` reads a lens command's runs. A lens subclasses it in its
    `comparison.py` and names the object in its `DeclaredCommand.comparison`.

    Records reach these methods already restricted (to the items every run shares, with
    --shared-items), so every figure is computed from exactly the records it covers."""

    record_model: type  # the command's runs.LensRecord

    def systems(self, records: Iterable[Any],
                manifest: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The run's systems by name (a run may hold several, e.g. one per retriever) and
        the records each is scored on, in a stable order; `manifest` is the run's
        manifest.json (its config names what the records do not)."""
        raise NotImplementedError

    def item(self, record: Any) -> str:
        """The record's item as every run of the dataset names it (for --shared-items)."""
        raise NotImplementedError

    def headlines(self, records: list[Any]) -> dict[str, Headline]:
        """The headline metrics of one system's records, by a stable key."""
        raise NotImplementedError

    def tables(self, systems: Mapping[str, list[Any]], seed: int) -> list[Table]:
        """The lens's main table(s) in its paper's layout, with 95 % CIs."""
        raise NotImplementedError

    def figures(self, tables: list[Table]) -> list[tuple[bytes, str]]:
        """Plots of `tables` (as `tables` returned them, rows named by system) with their
        captions: PNG bytes from `report.plots`, so every plotted number is in a table."""
        return []

    def unit_text(self, records: list[Any]) -> dict[str, tuple[str, str]]:
        """Unit key -> (its title, what the system answered or ranked, as plain text), for the
        report's browser of the units where two systems differ most."""
        raise NotImplementedError
