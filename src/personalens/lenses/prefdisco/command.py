"""`personalens prefdisco eval`: the PrefDisco lens on the run harness.

Items are (instance, condition); dialogue turns and user replies are steps, so a killed
conversation resumes at its turn. Roles: target (`--model`), simulated user (`--user-model`)
and judge(s) (`--judge`, or `--judges A,B`); each defaults to the target's endpoint settings.
"""

from dataclasses import dataclass, field
from pathlib import Path

from personalens.errors import InputError
from personalens.lenses.prefdisco.analysis import summarise
from personalens.lenses.prefdisco.evaluation import (
    Evaluation,
    Item,
    Roles,
    Temperatures,
)
from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.lenses.prefdisco.release_format import load, require_valid
from personalens.lenses.prefdisco.report_page import browser_entries, report_sections
from personalens.lenses.prefdisco.simulated_user import UserKind
from personalens.models import ModelSettings
from personalens.models.rubric_judge import ScoringMode
from personalens.report.run_page import run_page
from personalens.runs import (
    ItemRecords,
    Lens,
    Outcome,
    RunContext,
    RunIdentity,
    Tally,
    fingerprint,
    run_lens,
)

CONDITIONS = ("baseline", "discovery", "oracle")


@dataclass(frozen=True)
class PrefdiscoOptions:
    data: Path
    out: Path
    target: ModelSettings
    user: ModelSettings
    judges: list[ModelSettings]
    conditions: list[str] = field(default_factory=lambda: list(CONDITIONS))
    fixed_questions: list[int] = field(default_factory=list)
    turns: int = 5
    user_kind: UserKind = "passive"
    scoring: ScoringMode = "strict"
    skip_invalid: bool = False
    temperatures: Temperatures = field(default_factory=Temperatures)
    attempts: int = 3
    max_tokens: int = 1024
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def all_conditions(self) -> list[str]:
        return [*self.conditions, *[f"fixed_{n}" for n in self.fixed_questions]]

    def check(self) -> None:
        unknown = [c for c in self.conditions if c not in CONDITIONS]
        if unknown or not self.all_conditions:
            raise InputError(f"--conditions takes {', '.join(CONDITIONS)} (got "
                             f"{', '.join(unknown) or 'none'})")
        if self.user_kind not in ("passive", "collaborative"):
            raise InputError(f"--user is passive or collaborative (got {self.user_kind!r})")
        if self.scoring not in ("strict", "release"):
            raise InputError(f"--scoring is strict or release (got {self.scoring!r})")
        if self.turns < 1:
            raise InputError(f"--turns must be at least 1 (got {self.turns})")
        if any(n < 1 for n in self.fixed_questions):
            raise InputError("--fixed-questions takes positive counts")
        if self.attempts < 1:
            raise InputError("--attempts must be at least 1")
        if self.max_tokens < 16:
            raise InputError(f"--max-tokens must be at least 16 (got {self.max_tokens})")
        for name, value in vars(self.temperatures).items():
            if not 0.0 <= value <= 2.0:
                raise InputError(f"the {name} temperature must be in [0, 2] (got {value})")
        for settings in [self.target, self.user, *self.judges]:
            settings.validate_spec()

    def config(self) -> dict:
        return {"lens": "prefdisco", "data": str(self.data.resolve()),
                "conditions": self.all_conditions, "turns": self.turns, "user": self.user_kind,
                "scoring": self.scoring, "skip_invalid": self.skip_invalid,
                "models": {"target": self.target.spec, "user": self.user.spec,
                           "judges": [j.spec for j in self.judges]},
                "temperatures": vars(self.temperatures), "attempts": self.attempts,
                "max_tokens": self.max_tokens}


class PrefdiscoEval(Lens):
    """PrefAlign, accuracy and NormAlign per condition and task."""

    name = "prefdisco"
    title = "personalens · PrefDisco evaluation"

    def __init__(self, options: PrefdiscoOptions):
        super().__init__(options.prices)
        options.check()
        self.options = options
        self.dataset = load(options.data)
        require_valid(self.dataset, skip_invalid=options.skip_invalid)
        self.items = [Item(instance, condition) for instance in self.dataset.instances
                      for condition in options.all_conditions]
        judges = [j.load("judge", self.ledger) for j in options.judges]
        self.evaluation = Evaluation(
            Roles(options.target.load("target", self.ledger),
                  options.user.load("user", self.ledger), judges),
            turns=options.turns, user_kind=options.user_kind, scoring=options.scoring,
            temperatures=options.temperatures, attempts=options.attempts,
            max_tokens=options.max_tokens)

    def identity(self) -> RunIdentity:
        options = self.options
        return RunIdentity(
            config=options.config(),
            dataset_hash=fingerprint(self.dataset.files, options.data.resolve().parent
                                     if options.data.is_file() else options.data.resolve()),
            seeds={"bootstrap": 0},
            models={"target": options.target.spec, "user": options.user.spec,
                    "judge": ",".join(j.spec for j in options.judges)},
            endpoints={"target": options.target.public(), "user": options.user.public(),
                       "judge": options.judges[0].public()},
            extra={"temperatures": vars(options.temperatures),
                   "skipped_invalid": [i.as_record() for i in self.dataset.invalid]})

    async def setup(self, context: RunContext) -> None:
        self.evaluation.steps = context.steps

    def plan(self) -> list[Item]:
        return self.items

    async def run_item(self, item: Item) -> dict:
        return await self.evaluation.record(item)

    def summarise(self, records: ItemRecords, tally: Tally) -> PrefdiscoMetrics:
        summary = summarise(records, instances=[(i.key, i.task) for i in self.dataset.instances],
                            conditions=self.options.all_conditions,
                            n_judges=len(self.options.judges))
        return PrefdiscoMetrics.model_validate({
            **summary, "scoring": self.options.scoring,
            "conditions": self.options.all_conditions,
            "skipped_invalid": [i.as_record() for i in self.dataset.invalid],
            "data_warnings": {i.key: i.warnings for i in self.dataset.instances if i.warnings},
            "failures": tally.failures})

    def render_report(self, metrics: PrefdiscoMetrics, tally: Tally, manifest: dict,
                      records: ItemRecords) -> str:
        config = manifest["config"]
        models = config["models"]
        return run_page(
            self.title, tally, manifest,
            summary=(f"Data: {config['data']} · target {models['target']} · user "
                     f"{models['user']} ({config['user']}) · judge(s) "
                     f"{', '.join(models['judges'])} · scoring {config['scoring']} · "
                     f"{metrics.n_instances} of {metrics.n_planned_instances} instances paired"),
            sections=lambda report: report_sections(report, metrics, records),
            browser=browser_entries(records, {i.key: i for i in self.dataset.instances},
                                    self.options.turns))

    async def aclose(self) -> None:
        await self.evaluation.aclose()


def run_eval(options: PrefdiscoOptions, *, progress: bool = True) -> Outcome:
    """Validate everything (nothing is written if any input is bad), then evaluate."""
    return run_lens(PrefdiscoEval(options), options.out, progress=progress)

