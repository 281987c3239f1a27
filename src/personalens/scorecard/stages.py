"""The runs of a scorecard, each a lens command's options: the population, the three builds
made from it once, and one eval per lens and system (`DIR/<lens>/<system>/`).

Every run is an ordinary run directory of its command, so rerunning the scorecard resumes
each one, and a system added later reuses the population and the builds as they are.
"""

from dataclasses import dataclass
from pathlib import Path

from personalens.lenses import LENSES
from personalens.lenses.commands import DeclaredCommand, lens_commands
from personalens.models.settings import ModelSettings
from personalens.runs.options import LensOptions
from personalens.scorecard.sizes import Size
from personalens.scorecard.systems import System

GROUPS = {"personabench": "find", "pqb": "robust", "prefdisco": "ask", "prisk": "safe"}
GENERATE = DeclaredCommand("generate", "personalens.population.generate_options:GenerateOptions",
                           "personalens.population.generate:run_generate", "")


@dataclass(frozen=True)
class Stage:
    """One run of the scorecard: `system` is None for the population and the builds."""

    label: str  # "build prefdisco", "prisk · small"
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
    judge: ModelSettings  # the judge, PrefDisco's simulated user and every build's generator
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
        stages = [] if self.population else [self._stage("generate population", None,
                                                         GENERATE, self._generate())]
        builds = {"pqb": self._pqb_build, "prefdisco": self._prefdisco_build,
                  "prisk": self._prisk_build}
        for lens in self.lenses:
            if lens in builds:
                stages.append(self._stage(f"build {lens}", None, _command(lens, "build"),
                                          builds[lens]()))
        return stages

    def evaluations(self) -> list[Stage]:
        """One eval per lens and system, lens by lens (the display's order)."""
        return [self.evaluation(lens, system) for lens in self.lenses for system in self.systems]

    def evaluation(self, lens: str, system: System) -> Stage:
        """The eval of `lens` for `system`; InputError if its options refuse the built data."""
        evals = {"personabench": self._personabench, "pqb": self._pqb,
                 "prefdisco": self._prefdisco, "prisk": self._prisk}
        return self._stage(f"{lens} · {system.name}", lens, _command(lens, "eval"),
                           evals[lens](system), system)

    def _stage(self, label, lens, command, values: dict, system=None) -> Stage:
        return Stage(label, lens, system, command, command.options_model().parse(**values))

    def _generate(self) -> dict:
        size = self.size
        return dict(people=size.people, communities=1, out=self.population_dir,
                    noise=["0.0", size.noise], attributes_per_person=size.attributes_per_person,
                    max_list_entries=size.max_list_entries, profile_schema=size.schema,
                    models={"generator": self.judge})

    def _pqb_build(self) -> dict:
        return dict(out=self.data("pqb"), population=self.population_dir,
                    candidates=self.size.pqb_candidates, max_items=self.size.pqb_items,
                    min_sentences=self.size.pqb_min_sentences,
                    pair_users=self.size.pqb_pair_users,
                    models={"generator": self.judge})

    def _prefdisco_build(self) -> dict:
        size = self.size
        return dict(out=self.data("prefdisco"), population=self.population_dir,
                    tasks=list(size.prefdisco_tasks), limit=size.prefdisco_problems,
                    per_problem=size.prefdisco_per_problem,
                    preferences=size.prefdisco_preferences, models={"generator": self.judge})

    def _prisk_build(self) -> dict:
        size = self.size
        return dict(out=self.data("prisk"), population=self.population_dir,
                    profiles=size.prisk_profiles, per_risk=size.prisk_per_risk,
                    risks=list(size.prisk_risks),
                    models={"generator": self.judge, "judge": self.judge})

    def _personabench(self, system: System) -> dict:
        return dict(data=self.population_dir / "synthetic_data",
                    out=self.eval_dir("personabench", system), noise=[self.size.noise],
                    retriever=[system.retriever], k=self.size.k,
                    models={"target": system.settings})

    def _pqb(self, system: System) -> dict:
        return dict(data=self.data("pqb"), out=self.eval_dir("pqb", system),
                    retriever=system.retriever,
                    models={"settings": {}, "endpoint": system.settings})

    def _prefdisco(self, system: System) -> dict:
        return dict(data=self.data("prefdisco") / "data", out=self.eval_dir("prefdisco", system),
                    turns=self.size.prefdisco_turns,
                    models={"target": system.settings, "user": self.judge,
                            "judge": self.judge})

    def _prisk(self, system: System) -> dict:
        return dict(data=self.data("prisk") / "data", out=self.eval_dir("prisk", system),
                    retriever=system.retriever, samples=self.size.prisk_samples,
                    base_samples=self.size.prisk_base_samples,
                    max_tokens=self.size.prisk_max_tokens,
                    models={"target": system.settings, "judge": self.judge})


def _command(lens: str, name: str) -> DeclaredCommand:
    return next(c for c in lens_commands(lens).commands
                if isinstance(c, DeclaredCommand) and c.name == name)


def known_lenses(names: list[str]) -> list[str]:
    """The lenses asked for, in the registry's order; InputError naming an unknown one."""
    from personalens.errors import InputError

    unknown = [n for n in names if n not in LENSES]
    if unknown:
        raise InputError(f"unknown lens {unknown[0]!r}; the lenses are {', '.join(LENSES)}")
    return [lens for lens in LENSES if lens in names]
