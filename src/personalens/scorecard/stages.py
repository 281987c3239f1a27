"""The runs of a scorecard, each a lens command's options: the population, the builds made
from it once, and one eval per lens and system (`DIR/<lens>/<system>/`), as each lens declares
them (`lenses.commands.Scorecard`).

Every run is an ordinary run directory of its command, so rerunning the scorecard resumes
each one, and a system added later reuses the population and the builds as they are.
"""

from dataclasses import dataclass
from pathlib import Path

from personalens.lenses import LENSES
from personalens.lenses.commands import (
    ENDPOINT,
    JUDGE,
    SYSTEM,
    CardRun,
    DeclaredCommand,
    Scorecard,
    lens_commands,
)
from personalens.models.settings import ModelSettings
from personalens.runs.options import LensOptions
from personalens.scorecard.sizes import Size
from personalens.scorecard.systems import System

GENERATE = DeclaredCommand("generate", "personalens.population.generate_options:GenerateOptions",
                           "personalens.population.generate:run_generate", "")


@dataclass(frozen=True)
class Stage:
    """One run of the scorecard: `system` is None for the population and the builds."""

    label: str  # "build <lens>", "<lens> · small"
    lens: str | None
    system: System | None
    command: DeclaredCommand
    options: LensOptions

    @property
    def out(self) -> Path:
        return self.options.out


@dataclass(frozen=True)
class Plan:
    """Where the scorecard's runs go and what they share."""

    out: Path
    size: Size
    systems: list[System]
    lenses: list[str]
    judge: ModelSettings  # the judge, every simulated user and every build's generator
    population: Path | None = None  # a given population (else generated under out)

    @property
    def population_dir(self) -> Path:
        return self.population or self.out / "population"

    def data(self, lens: str) -> Path:
        return self.out / "data" / lens

    def eval_dir(self, lens: str, system: System) -> Path:
        return self.out / lens / system.name

    def preparation(self) -> list[Stage]:
        """The population (unless given) and the builds the chosen lenses read."""
        stages = [] if self.population else [Stage(
            "generate population", None, None, GENERATE,
            GENERATE.options_model().parse(**self._generate()))]
        for lens in self.lenses:
            build = card(lens).build
            if build is not None:
                stages.append(self._stage(f"build {lens}", lens, build, None, {
                    "out": self.data(lens), "population": self.population_dir}))
        return stages

    def evaluations(self) -> list[Stage]:
        """One eval per lens and system, lens by lens (the display's order)."""
        return [self.evaluation(lens, system) for lens in self.lenses for system in self.systems]

    def evaluation(self, lens: str, system: System) -> Stage:
        """The eval of `lens` for `system`; InputError if its options refuse the built data."""
        declared = card(lens)
        data = (self.data(lens) if declared.build else self.population_dir) / declared.data
        return self._stage(f"{lens} · {system.name}", lens, declared.eval, system,
                           {"data": data, "out": self.eval_dir(lens, system)})

    def _stage(self, label: str, lens: str, run: CardRun, system: System | None,
               values: dict) -> Stage:
        command = lens_commands(lens).command(run.command)
        model = command.options_model()
        if system is not None and "retriever" in model.model_fields:
            values["retriever"] = system.retriever
        values |= run.sizes[self.size.name] if run.sizes else {}
        players = {SYSTEM: system.settings if system else None, JUDGE: self.judge}
        models: dict = {"settings": {role: players[who] for role, who in run.models.items()
                                     if role != ENDPOINT}}
        if ENDPOINT in run.models:
            models["endpoint"] = players[run.models[ENDPOINT]]
        return Stage(label, lens if system else None, system, command,
                     model.parse(**values, models=models))

    def _generate(self) -> dict:
        size = self.size
        return dict(people=size.people, communities=1, out=self.population_dir,
                    noise=["0.0", size.noise], attributes_per_person=size.attributes_per_person,
                    max_list_entries=size.max_list_entries, profile_schema=size.schema,
                    models={"generator": self.judge})


def card(lens: str) -> Scorecard:
    """The lens's scorecard declaration."""
    declared = lens_commands(lens).scorecard
    if declared is None or lens_commands(lens).command(declared.eval.command).metrics is None:
        raise ValueError(f"the lens {lens!r} declares no scorecard, or its eval no metrics model")
    return declared


def card_lenses() -> list[str]:
    """The registered lenses a scorecard can run, in the registry's order."""
    return [lens for lens in LENSES if lens_commands(lens).scorecard is not None]


def known_lenses(names: list[str]) -> list[str]:
    """The lenses asked for, in the registry's order; InputError naming an unknown one."""
    from personalens.errors import InputError

    lenses = card_lenses()
    unknown = [n for n in names if n not in lenses]
    if unknown:
        raise InputError(f"unknown lens {unknown[0]!r}; the lenses are {', '.join(lenses)}")
    return [lens for lens in lenses if lens in names]
