"""`personalens prefdisco eval`: the PrefDisco lens on the run harness.

Items are (instance, condition); dialogue turns and user replies are steps, so a killed
conversation resumes at its turn. Roles: target (`--model`), simulated user (`--user-model`)
and judge(s) (`--judge`, or `--judges A,B`); each defaults to the target's endpoint settings.
The user's and the judge's models must be given unless `--allow-self-judging` lets them fall
back to the target's.
"""

from dataclasses import asdict

from personalens.lenses.prefdisco.analysis import summarise
from personalens.lenses.prefdisco.evaluation import Evaluation, Item, plan_items
from personalens.lenses.prefdisco.metrics import PrefdiscoMetrics
from personalens.lenses.prefdisco.options import EvalOptions, refuse_self_judging
from personalens.lenses.prefdisco.records import PrefdiscoRecord
from personalens.lenses.prefdisco.release_format import load, require_valid
from personalens.lenses.prefdisco.report_page import browser_entries, report_sections
from personalens.models import RoleSet
from personalens.report import BrowserItems, HtmlReport
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


class PrefdiscoEval(Lens[EvalOptions, PrefdiscoRecord, PrefdiscoMetrics]):
    """PrefAlign, accuracy and NormAlign per condition and task."""

    name = "prefdisco"
    title = "personalens · PrefDisco evaluation"
    record_model = PrefdiscoRecord
    judged = True

    def __init__(self, options: EvalOptions):
        """Validates the data and every model spec before any run directory exists."""
        super().__init__(options, options.models.prices)
        self.data = options.data.resolve()
        self.dataset = load(options.data)
        require_valid(self.dataset, skip_invalid=options.skip_invalid)
        settings = options.models.resolved(EvalOptions.roles)
        judge = settings.pop("judge")
        # --judges are the judge's endpoint with other models: one RoleSet each, so every
        # judge is the ledger's "judge".
        self.judges = [RoleSet({"judge": judge.with_spec(spec)}, self.ledger)
                       for spec in options.judges] or [RoleSet({"judge": judge}, self.ledger)]
        self.roles = RoleSet(settings, self.ledger)

    def identity(self) -> RunIdentity:
        judges = [j.settings["judge"] for j in self.judges]
        return RunIdentity(
            options=self.options, seeds={"bootstrap": 0},
            dataset_hash=fingerprint(self.dataset.files, self.data.parent
                                     if self.data.is_file() else self.data),
            models={**self.roles.specs(), "judge": ",".join(j.spec for j in judges)},
            endpoints={**self.roles.endpoints(), "judge": judges[0].public()},
            extra={"skipped_invalid": [asdict(i) for i in self.dataset.invalid],
                   "self_roles": self.self_roles()})

    def self_roles(self) -> list[str]:
        """"self-simulated" when the target plays its own user, "self-judged" when it judges
        itself: a run that grades a model by itself says so (the paper fixes both roles to
        one other model for every target)."""
        target = self.roles.specs()["target"]
        return [label for label, same in (
            ("self-simulated", self.roles.specs()["user"] == target),
            ("self-judged", any(j.settings["judge"].spec == target for j in self.judges)))
            if same]

    async def setup(self, context: RunContext) -> None:
        self.evaluation = Evaluation(self.options, self.roles["target"], self.roles["user"],
                                     [j["judge"] for j in self.judges], context.steps)

    def plan(self) -> list[Item]:
        return plan_items(self.dataset.instances, self.options.all_conditions)

    async def run_item(self, item: Item) -> PrefdiscoRecord:
        return await self.evaluation.record(item)

    def summarise(self, records: ItemRecords[PrefdiscoRecord], tally: Tally) -> PrefdiscoMetrics:
        options = self.options
        summary = summarise(records, instances=[(i.key, i.task) for i in self.dataset.instances],
                            conditions=options.all_conditions, n_judges=len(self.judges),
                            min_gap=options.normalign_min_gap, truncated=options.truncated)
        return PrefdiscoMetrics.model_validate({
            **summary, "scoring": options.scoring, "protocol": options.protocol,
            "correctness": options.correctness, "truncated_answers": options.truncated,
            "conditions": options.all_conditions,
            "skipped_invalid": [asdict(i) for i in self.dataset.invalid],
            "data_warnings": {i.key: i.warnings for i in self.dataset.instances if i.warnings},
            "failures": tally.failures})

    def summary_line(self, metrics: PrefdiscoMetrics) -> str:
        specs = self.roles.specs()
        return (f"Data: {self.data} · target {specs['target']} · user {specs['user']} "
                f"({self.options.user}) · judge(s) "
                f"{', '.join(j.settings['judge'].spec for j in self.judges)} · protocol "
                f"{self.options.protocol} · scoring {self.options.scoring} · correctness "
                f"{self.options.correctness} · "
                f"{sum(t.count for t in metrics.truncated.values())} truncated answer(s) · "
                f"{metrics.n_instances} of "
                f"{metrics.n_planned_instances} instances paired"
                + "".join(f" · {label.upper()}" for label in self.self_roles()))

    def report_sections(self, report: HtmlReport, metrics: PrefdiscoMetrics,
                        records: ItemRecords[PrefdiscoRecord]) -> None:
        report_sections(report, metrics, records, self.options.normalign_min_gap)

    def browser(self, records: ItemRecords[PrefdiscoRecord]) -> BrowserItems:
        return browser_entries(records, {i.key: i for i in self.dataset.instances},
                               self.options)

    async def aclose(self) -> None:
        for roles in (self.roles, *self.judges):
            await roles.aclose()


def run_eval(options: EvalOptions, *, progress: bool = True) -> Outcome:
    """Validate everything (nothing is written if any input is bad), then evaluate."""
    refuse_self_judging(options)
    return run_lens(PrefdiscoEval(options), options.out, progress=progress)
