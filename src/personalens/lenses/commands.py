"""What a lens declares, once: its commands, its scorecard columns and runs, its Inspect task
(the registry is `lenses.LENSES`; nothing outside a lens's package names it).

Each lens package has a `commands.py` holding `LENS = LensCommands(...)`. A run command is
declared by its options model and its runner; the CLI builds its flags from the model
(`cli.declared_command`), and Inspect its task's parameters (`inspect_tasks.parameters`).
Targets are "module:name" strings, imported only when used, so `personalens --help` loads no
lens's models or data.

A run command whose runs `personalens compare` reads names its lens's `Comparison` (how a run
becomes systems, per-unit headlines and the paper's tables); the types it speaks in (Headline,
Table) are here, below the compare layer, so a lens never imports that layer. The scorecard
reads a lens's `Scorecard` (its group, headline columns, and the build and eval of each size).
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
    # "module:Model", the `runs.Metrics` its metrics.json holds (what the scorecard reads).
    metrics: str | None = None

    def options_model(self):
        return resolve(self.options)


@dataclass(frozen=True)
class TyperCommand:
    """A command that is not a run (validate, compare): a typer function in the lens."""

    name: str
    function: str  # "module:function", annotated for typer
    roles: tuple[Role, ...] = ()  # role options it takes (as `models: RoleModels`)
    example: str = ""  # one command line, the last thing its --help shows
    # Given: `function` makes the typer function when called with these (an alias of a
    # command of a layer above, e.g. `personalens compare` for one lens command's runs).
    arguments: tuple[str, ...] = ()

    def typer_function(self) -> Callable:
        """The typer function, imported (and made, with `arguments`) now."""
        function = resolve(self.function)
        return function(*self.arguments) if self.arguments else function


# Who plays a role in a scorecard's run: the system under test, or the card's one fixed judge
# (which also plays simulated users and generates the data).
SYSTEM, JUDGE = "system", "judge"
# A `CardRun.models` key: the endpoint of models the options name elsewhere (a reranker's).
ENDPOINT = "endpoint"


@dataclass(frozen=True)
class CardMetric:
    """One headline of a lens as a scorecard column: scorecard.json's `systems.<system>.
    <lens>.<name>` and `metrics.<lens>.<name>`."""

    name: str
    label: str  # what it is, with its scale ("IRP (0-100, safer higher)")
    short: str  # the scorecard table's column
    # "module:function": (the eval's metrics model, read from its metrics.json; the eval's
    # options) -> `stats.estimate.Estimate`, or None when the run has no such figure.
    value: str
    # The `personalens compare` headline of the same figure, formatted with the eval's
    # options' fields ("recall@{noise[0]}"): the pair test between two systems.
    compared: str
    higher_is_better: bool
    scale: str = ""  # its unit or scale: "0-1", "1-5", "0-100"
    # The judge-audit metrics that score it (empty: no LLM judge), and the factor from their
    # 1-5 (or 0-1) scale to this metric's (None: not a linear map, e.g. NormAlign's ratio).
    judged: tuple[str, ...] = ()
    noise_scale: float | None = None


@dataclass(frozen=True)
class CardRun:
    """One of a lens's run commands as a scorecard runs it. The scorecard gives `out`, the
    build's `population` (the card's population folder), the eval's `data` (see
    `Scorecard.data`) and `retriever` (the system's, when the options have one), and `models`;
    `sizes` gives the rest."""

    command: str  # the command's name in the lens ("build", "eval")
    # --size (tiny, small, standard) -> option values; empty: the same options at every size
    sizes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    models: Mapping[str, str] = field(default_factory=dict)  # role (or ENDPOINT) -> SYSTEM|JUDGE


@dataclass(frozen=True)
class Scorecard:
    """What a lens is on `personalens scorecard`: a group of columns, and its runs."""

    group: str  # the column group ("find", "robust", "ask", "safe")
    metrics: tuple[CardMetric, ...]
    eval: CardRun  # once per system, into DIR/<lens>/<system>/
    build: CardRun | None = None  # once per card, from the population, into DIR/data/<lens>/
    # The eval's --data, relative to the build's folder, or to the population without a build.
    data: str = ""


@dataclass(frozen=True)
class InspectTask:
    """A run command as the Inspect task `personalens/<lens>`. Its parameters are the
    command's options named in `parameters`, generated from the options model (type, default,
    help) as the CLI's flags are; every function is "module:function" and imports no Inspect."""

    lens: str  # "module:Class", the `runs.Lens` built from the options
    parameters: tuple[str, ...]  # the options it takes, in order
    sample: str  # item -> Sample fields (input, target, metadata)
    figures: str  # record line -> a sample's score values
    headlines: str  # the lens's metrics -> its headline figures
    answer: str | None = None  # record line -> the sample's shown answer
    command: str = "eval"
    defaults: Mapping[str, Any] = field(default_factory=dict)  # the task's own defaults
    aliases: Mapping[str, str] = field(default_factory=dict)  # an old parameter -> its option
    check: str | None = None  # "module:function" refusing arguments the task cannot run


@dataclass(frozen=True)
class Demo:
    """How `personalens demo` evaluates the community it generates with this lens (the first
    registered lens that declares a demo)."""

    command: str  # the run command ("eval")
    options: str  # "module:function": (population folder, run folder) -> its options
    summary: str  # "module:function": (run folder, metrics, options) -> the closing lines


@dataclass(frozen=True)
class LensCommands:
    name: str  # the sub-command and the lens's package
    help: str
    commands: list[DeclaredCommand | TyperCommand] = field(default_factory=list)
    data: tuple[str, ...] = ()  # package data globs under the lens's folder (pyproject)
    scorecard: Scorecard | None = None  # None: not on the scorecard
    inspect: InspectTask | None = None  # None: no Inspect task
    demo: Demo | None = None  # None: not what `personalens demo` evaluates with

    def command(self, name: str) -> DeclaredCommand:
        """The run command `name` ("eval")."""
        return next(c for c in self.commands
                    if isinstance(c, DeclaredCommand) and c.name == name)


def lens_commands(lens: str) -> LensCommands:
    """A registered lens's declaration (`lenses.LENSES[lens]`, its `commands.LENS`)."""
    return resolve(LENSES[lens])


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
